// PlayerSession: redundant variants, failover and content steering (docs/renditions-and-failover.md).

import Foundation
import HLSCore
import HLSMedia
import HLSNet

extension PlayerSession {
    // MARK: - Redundant variants, failover and content steering (docs/renditions-and-failover.md)

    /// Which variant of the rung `representative` stands for to load now: the
    /// FailoverTracker's choice, in the steering pathway order; a change is logged.
    func chooseRedundant(forRung representative: Int) -> Int {
        guard var tracker = failover, representative >= 0, representative < tracker.variants.count else { return representative }
        let choice = tracker.choose(rungOf: representative, pathwayOrder: steering?.pathwayOrder, at: clock.now())
        failover = tracker
        logFailover(choice.actions)
        guard variants.contains(where: { $0.index == choice.variantIndex }) else { return representative }
        if choice.changed, let from = choice.previousVariantIndex {
            recorder.record(
                .failover(
                    LoadingNote(
                        kind: "switched", detail: choice.reason,
                        variantIndex: choice.variantIndex, fromVariantIndex: from, pathway: choice.pathwayID)))
        }
        return choice.variantIndex
    }

    func logFailover(_ actions: [FailoverAction]) {
        for action in actions { recorder.record(.failover(action.logNote)) }
    }

    /// Counts a failed request against its variant's URI. True when that
    /// excluded the URI and its rung has a redundant variant still usable.
    func failoverAfter(_ error: LoadError, purpose: RequestPurpose, variantIndex: Int?) -> Bool {
        guard purpose == .segment || purpose == .mediaPlaylist || purpose == .initSection,
            let v = variantIndex, var tracker = failover, v >= 0, v < tracker.variants.count
        else { return false }
        let now = clock.now()
        let actions = tracker.recordFailure(variantIndex: v, error: error, at: now)
        failover = tracker
        logFailover(actions)
        let excluded = actions.contains { if case .excluded = $0 { true } else { false } }
        guard excluded else { return false }
        if var client = steering {
            let steeringActions = client.reevaluate(excludedPathways: tracker.excludedPathways(at: now), at: now)
            steering = client
            logSteering(steeringActions)
        }
        return tracker.redundantAlternatives(of: v).contains { tracker.exclusionEnd(ofVariant: $0, at: now) == nil }
    }

    func logSteering(_ actions: [SteeringAction]) {
        for action in actions { recorder.record(.steering(action.logNote)) }
    }

    /// Loads the steering manifest when its reload is due (TTL or RELOAD-URI): before the first decision and then
    /// between requests. Returns the variants its PATHWAY-CLONES added (the VOD loader core is told of them).
    @discardableResult
    func reloadSteeringIfDue() -> ArraySlice<VariantInfo> {
        guard steering?.isReloadDue(at: clock.now()) == true else { return [] }
        let known = variants.count
        loadSteeringManifest()
        return variants[known...]
    }

    /// Loads the steering manifest (with _HLS_pathway and _HLS_throughput) and applies it:
    /// the pathway priority, and PATHWAY-CLONES as new variants.
    private func loadSteeringManifest() {
        guard var client = steering, let mv = multivariant else { return }
        let url = client.requestURL(throughputBps: measuredEstimate())
        let response: HTTPResponse
        do {
            // Cut for a live step: not the manifest's failure; it is due again on the next turn.
            guard
                let loaded = try fetch(
                    url, purpose: .steeringManifest, variantIndex: nil, mediaSequence: nil, byteRange: nil,
                    policy: RetryPolicy(maxAttempts: 1)
                ).value(unlessLiveStepDropped: "steering manifest", url: shown(url))
            else { return }
            response = loaded
        } catch {
            let failure = error as? SessionFailure
            let loadError = LoadError(
                kind: failure?.httpStatus != nil ? .httpStatus : .connect, url: url.absoluteString,
                httpStatus: failure?.httpStatus, message: failure?.message ?? "\(error)")
            logSteering(client.manifestFailed(loadError, at: clock.now()))
            steering = client
            return
        }
        switch Result(catching: { () throws(SteeringManifestError) -> SteeringManifest in
            try SteeringManifest.parse(response.body, manifestURL: response.effectiveURL)
        }) {
        case .failure(let error):
            logSteering(client.manifestRejected(error, at: clock.now()))
        case .success(let manifest):
            let update = client.manifestLoaded(
                manifest, playlist: mv, excludedPathways: failover?.excludedPathways(at: clock.now()) ?? [:], at: clock.now())
            logSteering(update.actions)
            let added = Array(update.playlist.variants.dropFirst(mv.variants.count))
            if !added.isEmpty {
                // PATHWAY-CLONES: new variants, on the rungs they copy.
                for (k, v) in added.enumerated() {
                    variants.append(
                        VariantInfo(
                            index: mv.variants.count + k, uri: v.uri, bandwidthBps: v.bandwidthBps, resolution: v.resolution, audioGroup: v.audioGroup
                        ))
                }
                failover?.appendVariants(added)
            }
            multivariant = update.playlist
        }
        steering = client
    }
}
