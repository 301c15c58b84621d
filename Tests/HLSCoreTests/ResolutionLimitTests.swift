// ResolutionLimit: the largest picture hlsplay decodes (`--max-resolution`), in either orientation.
// Each threshold just under and at it.

import Foundation
import Testing
@testable import HLSCore

@Suite struct ResolutionLimitTests {
    let eightK = ResolutionLimit.default8K

    @Test func default8K_isDCI8K() {
        #expect(eightK.description == "8192x4320")
        #expect(eightK.maxPixels == 35_389_440)
    }

    @Test func admits_atTheLimitEitherOrientation_refusesJustAbove() {
        #expect(eightK.admits(width: 8192, height: 4320))
        #expect(eightK.admits(width: 7680, height: 4320)) // UHD-2
        #expect(eightK.admits(width: 4320, height: 8192)) // portrait
        #expect(!eightK.admits(width: 8193, height: 4320))
        #expect(!eightK.admits(width: 8192, height: 4321))
        #expect(!eightK.admits(width: 4321, height: 8192))
        #expect(!eightK.admits(width: 16000, height: 16000))
        // Within the pixel count but longer than the long side: refused (a 20000x100 strip).
        #expect(!eightK.admits(width: 20000, height: 100))
    }

    @Test func unknownDimensions_areNotAboveTheLimit() {
        #expect(eightK.admits(width: 0, height: 0))
        #expect(eightK.admits(width: 0, height: 99_999))
    }

    @Test func parsing_WxH_eitherOrder() {
        #expect(ResolutionLimit(parsing: "3840x2160") == ResolutionLimit(width: 3840, height: 2160))
        #expect(ResolutionLimit(parsing: "2160X3840")?.description == "3840x2160")
        for bad in ["", "8k", "3840", "3840x", "x2160", "0x100", "-1x5", "3840x2160x1", "99999999999x99999999999"] {
            #expect(ResolutionLimit(parsing: bad) == nil, "\(bad)")
        }
    }

    @Test func excludes_onlyADeclaredResolutionAboveIt() {
        #expect(!eightK.excludes(nil))
        #expect(!eightK.excludes(Resolution(width: 8192, height: 4320)))
        #expect(eightK.excludes(Resolution(width: 8192, height: 8192)))
    }
}
