// localPath(_:isInside:): which local files a local playlist may name; and the refusals are not retried.

import Foundation
import Testing
@testable import HLSCore

@Suite struct LocalFileScopeTests {
    @Test func inside_componentByComponent() {
        #expect(localPath("/data/stream/seg0.ts", isInside: "/data/stream"))
        #expect(localPath("/data/stream/v0/seg0.ts", isInside: "/data/stream"))
        #expect(localPath("/data/stream/seg0.ts", isInside: "/data/stream/"))
        #expect(!localPath("/data/stream-2/seg0.ts", isInside: "/data/stream")) // a sibling sharing the prefix
        #expect(!localPath("/data/stream", isInside: "/data/stream")) // the directory itself
        #expect(!localPath("/etc/passwd", isInside: "/data/stream"))
        #expect(localPath("/etc/passwd", isInside: "/"))
    }

    @Test func unresolvedOrRelativePaths_areNeverInside() {
        #expect(!localPath("/data/stream/../../etc/passwd", isInside: "/data/stream"))
        #expect(!localPath("/data/stream/./seg.ts", isInside: "/data/stream"))
        #expect(!localPath("seg0.ts", isInside: "/data/stream"))
        #expect(!localPath("/data/stream/seg0.ts", isInside: "data/stream"))
    }

    @Test func refusals_areNotRetried() {
        let policy = RetryPolicy.segment
        for kind in [LoadErrorKind.localFileRefused, .invalidURL] {
            #expect(!policy.isRetryable(LoadError(kind: kind, url: "x", message: "m")))
        }
    }
}
