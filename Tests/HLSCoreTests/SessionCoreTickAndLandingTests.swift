// The session core's monitor tick (monitorDecisions), a segment's landing (segmentLanded) and the tracks' ends
// (BufferedTracks): one call each in both shells, each test named after what a shell sees happen.

import Foundation
import Testing
@testable import HLSCore

@Suite struct BufferedTracksTests {
    @Test func withoutAlternateAudio_theVariantsEndIsWhatPlays_andItsEndIsTheStreams() {
        var tracks = BufferedTracks()
        tracks.placed(at: 10, alternateAudio: false)
        tracks.extend(.main, to: 16)
        tracks.extend(.main, to: 12)
        #expect(tracks.mainEndSeconds == 16, "never backwards")
        #expect(tracks.combinedEndSeconds == 16)
        #expect(!tracks.allEnded)
        tracks.end(.main)
        #expect(tracks.allEnded)
    }

    @Test func withAlternateAudio_theShorterTrackHoldsPlayback_untilItEnds() {
        var tracks = BufferedTracks()
        tracks.placed(at: 0, alternateAudio: true)
        tracks.extend(.main, to: 12)
        tracks.extend(.alternateAudio, to: 8)
        #expect(tracks.combinedEndSeconds == 8)
        #expect(tracks.bufferSeconds(mainEndingAt: 12, positionSeconds: 3) == 5, "a landing makes only what the audio reaches")
        tracks.end(.main)
        #expect(!tracks.allEnded, "the audio still loads")
        tracks.end(.alternateAudio)
        #expect(tracks.combinedEndSeconds == 12, "an ended track no longer holds the other back")
        #expect(tracks.allEnded)
    }

    @Test func aSeek_placesBothTracksAtTheNewEnd_keepingWhetherAudioLoads() {
        var tracks = BufferedTracks()
        tracks.placed(at: 0, alternateAudio: true)
        tracks.extend(.main, to: 30)
        tracks.extend(.alternateAudio, to: 28)
        tracks.placed(at: 20)
        #expect(tracks.mainEndSeconds == 20 && tracks.audioEndSeconds == 20)
        var videoOnly = BufferedTracks()
        videoOnly.placed(at: 5)
        #expect(videoOnly.audioEndSeconds == nil)
    }
}

@Suite struct SessionCoreTickAndLandingTests {
    typealias Helpers = SessionCoreTests
    static func at(_ seconds: Double) -> MonotonicInstant { MonotonicInstant(seconds: seconds) }

    static func withController() throws -> SessionCore {
        var core = Helpers.started(predictor: BufferThresholdPredictor())
        core.policyControllerStarted(try PolicyController(ladderBitratesBps: Helpers.ladderBps))
        return core
    }

    static func risks(_ actions: [SessionCoreAction]) -> Int {
        Helpers.records(actions).filter { if case .stallRisk = $0 { true } else { false } }.count
    }

    static func landing(variant: Int, from start: Double, seconds: Double = 2) -> SegmentLanding {
        SegmentLanding(variantIndex: variant, bandwidthBps: Helpers.ladderBps[variant], startSeconds: start, endSeconds: start + seconds)
    }

    @Test func segmentLanded_beforeTheStart_judgesTheStartOnce_withTheBufferItMakes_andReadsTheDeviceThen() throws {
        var core = try Self.withController()
        var deviceReads = 0
        let landed = core.segmentLanded(Self.landing(variant: 0, from: 0), currentRungBps: nil, at: Self.at(1), sessionStart: Self.at(0)) {
            deviceReads += 1
            return DeviceReadings()
        }
        #expect(Self.risks(landed.policy) == 1)
        let risk = Helpers.records(landed.policy).compactMap { if case .stallRisk(let r) = $0 { r } else { nil } }.first
        #expect(risk?.features.bufferSeconds == 2, "the buffer this 2 s segment makes at position 0")
        #expect(risk?.phase == .startingUp)
        #expect(deviceReads == 1)
        #expect(core.tracks.mainEndSeconds == 2)
        #expect(core.timeline.bufferedEndSeconds == 2, "the media clock got the main track's end")
        #expect(landed.buffered.isEmpty, "the first segment switches from nothing")
    }

    @Test func segmentLanded_afterTheStart_runsNoPolicy_readsNoDevice_andSaysTheSwitch() throws {
        var core = try Self.withController()
        _ = core.segmentLanded(Self.landing(variant: 0, from: 0, seconds: 6), currentRungBps: nil, at: Self.at(1), sessionStart: Self.at(0)) {
            DeviceReadings()
        }
        _ = core.timeline.markFirstFrameDecoded(at: Self.at(1))
        #expect(core.timeline.phase == .playing)
        var deviceReads = 0
        let landed = core.segmentLanded(Self.landing(variant: 2, from: 6), currentRungBps: nil, at: Self.at(2), sessionStart: Self.at(0)) {
            deviceReads += 1
            return DeviceReadings()
        }
        #expect(landed.policy.isEmpty && deviceReads == 0, "while playing the monitor runs the controller, not the landing")
        let switches = Helpers.records(landed.buffered).compactMap { if case .variantSwitch(let s) = $0 { s } else { nil } }
        #expect(switches.map(\.toVariantIndex) == [2])
        #expect(switches.first?.fromBandwidthBps == Helpers.ladderBps[0])
    }

    @Test func segmentLanded_withoutAPredictor_onlyBuffers() {
        var core = Helpers.started()
        let landed = core.segmentLanded(Self.landing(variant: 1, from: 0), currentRungBps: nil, at: Self.at(1), sessionStart: Self.at(0)) {
            Issue.record("no predictor: the device is never read")
            return DeviceReadings()
        }
        #expect(landed.policy.isEmpty)
        #expect(core.timeline.bufferedEndSeconds == 2)
    }

    @Test func trackEnded_lastTrack_endsTheStream() {
        var core = Helpers.started()
        core.tracksPlaced(at: 0, alternateAudio: true)
        _ = core.trackExtended(.main, to: 10, at: Self.at(1))
        _ = core.trackExtended(.alternateAudio, to: 6, at: Self.at(1))
        #expect(core.timeline.bufferedEndSeconds == 6, "the audio holds the media clock")
        _ = core.trackEnded(.main, at: Self.at(2))
        #expect(!core.timeline.endOfStream)
        _ = core.trackEnded(.alternateAudio, at: Self.at(2))
        #expect(core.timeline.endOfStream)
        #expect(core.timeline.bufferedEndSeconds == 10, "nothing holds the variant's media back any more")
    }

    @Test func monitorDecisions_overSelectedRequest_isJudgedForTheShellToCut_thenTheCapTicks() {
        var core = Helpers.started(mode: .off)
        let request = InFlightRequestInfo(
            requestID: 7, fetchID: 7, purpose: .segment, url: "http://127.0.0.1/v4/3.ts", mediaSequence: 3, track: nil,
            rungBitrateBps: 7_230_000)
        let monitored = MonitoredRequest(request: request, progress: Helpers.topRungInFlight(throughputBps: 2_000_000, elapsed: 3.2), judged: true)
        let (judgement, actions) = core.monitorDecisions(
            bufferSeconds: 0, phase: .startingUp, inFlight: monitored, currentRungBps: 7_230_000, at: Self.at(3.2), sessionStart: Self.at(0)
        ) { DeviceReadings() }
        #expect(judgement?.cancel == .overSelected)
        #expect(Helpers.records(actions).contains { if case .byteProgress = $0 { true } else { false } })
        #expect(core.peakBitrateCaps.effectiveBps != nil, "capped below the abandoned rung")
    }

    @Test func monitorDecisions_requestBeingCut_isNotJudgedAgain() {
        var core = Helpers.started(mode: .off)
        let request = InFlightRequestInfo(
            requestID: 7, fetchID: 7, purpose: .segment, url: "http://127.0.0.1/v4/3.ts", mediaSequence: 3, track: nil,
            rungBitrateBps: 7_230_000)
        let (judgement, _) = core.monitorDecisions(
            bufferSeconds: 0, phase: .startingUp,
            inFlight: MonitoredRequest(request: request, progress: Helpers.topRungInFlight(throughputBps: 2_000_000, elapsed: 3.2), judged: false),
            currentRungBps: nil, at: Self.at(3.2), sessionStart: Self.at(0)
        ) { DeviceReadings() }
        #expect(judgement == nil)
        #expect(core.peakBitrateCaps.effectiveBps == nil)
    }

    @Test func monitorDecisions_runTheControllerOnlyWhilePlaying_withTheSegmentsTransfer() throws {
        var core = try Self.withController()
        var deviceReads = 0
        let starting = core.monitorDecisions(
            bufferSeconds: 1, phase: .startingUp, inFlight: nil, currentRungBps: nil, at: Self.at(101), sessionStart: Self.at(100)
        ) {
            deviceReads += 1
            return DeviceReadings()
        }
        #expect(Self.risks(starting.actions) == 0 && deviceReads == 0)
        let request = InFlightRequestInfo(
            requestID: 9, fetchID: 9, purpose: .segment, url: "http://127.0.0.1/v0/5.ts", mediaSequence: 5, track: nil, rungBitrateBps: 300_000)
        let progress = InFlightSnapshot(
            bytesReceived: 1000, bytesExpected: 75_000, secondsSinceLastByte: 0.1, elapsedSeconds: 0.5, rttSeconds: nil,
            segmentDurationSeconds: 2, rungBitrateBps: 300_000, measuredThroughputBps: nil, forwardBufferSeconds: 1)
        let playing = core.monitorDecisions(
            bufferSeconds: 1, phase: .playing, inFlight: MonitoredRequest(request: request, progress: progress, judged: false),
            currentRungBps: 300_000, at: Self.at(101), sessionStart: Self.at(100)
        ) {
            deviceReads += 1
            return DeviceReadings(cpuPressureAvg10Percent: 12)
        }
        let risk = try #require(Helpers.records(playing.actions).compactMap { if case .stallRisk(let r) = $0 { r } else { nil } }.first)
        #expect(deviceReads == 1)
        #expect(risk.features.inFlightBytesReceived == 1000, "the segment's transfer reaches the predictor")
        #expect(risk.features.cpuPressureAvg10Percent == 12)
        var playlist = request
        playlist.purpose = .mediaPlaylist
        #expect(MonitoredRequest(request: playlist, progress: progress, judged: true).segmentProgress == nil, "the predictor reads segments only")
    }
}
