// Labelling and evaluation of stall predictors (issue 5 §4), pure.
//
// Label: a sample at time t is positive when a stall BEGINS in (t, t + H].
// Samples taken while already stalled are excluded (the question "will it
// stall?" has no meaning then), and so are negatives whose horizon runs past
// the end of the session (we cannot know they stay negative). The same
// definitions are implemented in Tools/train/train.py; keep them in step.

import Foundation

/// One monitor sample: the features at a time, in session seconds.
public struct StallSample: Sendable, Equatable, Codable {
    public var timeSeconds: Double
    public var features: StallFeatures
    public init(timeSeconds: Double, features: StallFeatures) {
        self.timeSeconds = timeSeconds
        self.features = features
    }
}

/// A stall, [start, end) in session seconds; end nil = still stalled at session end.
public struct StallInterval: Sendable, Equatable, Codable {
    public var startSeconds: Double
    public var endSeconds: Double?
    public init(startSeconds: Double, endSeconds: Double?) {
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
    }
    public func contains(_ t: Double) -> Bool { t >= startSeconds && t < (endSeconds ?? .infinity) }
}

public struct LabelledExample: Sendable, Equatable, Codable {
    public var timeSeconds: Double
    public var features: StallFeatures
    /// A stall begins in (t, t + H].
    public var label: Bool
    /// Seconds from t to that stall's start (nil for negatives).
    public var secondsToStall: Double?
}

public enum StallLabelling {
    /// Labels `samples` against `stalls` with horizon `horizonSeconds`.
    /// `sessionEndSeconds`: negatives with t + H past it are dropped (nil keeps all).
    public static func label(
        samples: [StallSample], stalls: [StallInterval], horizonSeconds: Double,
        sessionEndSeconds: Double?
    ) -> [LabelledExample] {
        let starts = stalls.map(\.startSeconds).sorted()
        var out: [LabelledExample] = []
        for s in samples {
            let t = s.timeSeconds
            if stalls.contains(where: { $0.contains(t) }) { continue }
            if let next = starts.first(where: { $0 > t }), next <= t + horizonSeconds {
                out.append(LabelledExample(timeSeconds: t, features: s.features, label: true, secondsToStall: next - t))
            } else {
                if let end = sessionEndSeconds, t + horizonSeconds > end { continue }
                out.append(LabelledExample(timeSeconds: t, features: s.features, label: false, secondsToStall: nil))
            }
        }
        return out
    }
}

/// One row of a reliability table.
public struct CalibrationBin: Sendable, Equatable, Codable {
    /// [lower, upper) in predicted probability (the last bin includes 1).
    public var lower: Double
    public var upper: Double
    public var count: Int
    public var meanPredicted: Double?
    public var observedRate: Double?
}

public struct PrecisionRecall: Sendable, Equatable, Codable {
    public var threshold: Double
    public var truePositives: Int
    public var falsePositives: Int
    public var falseNegatives: Int
    /// nil when nothing was predicted positive.
    public var precision: Double?
    /// nil when there are no positives.
    public var recall: Double?
}

/// Lead time of a predictor's warnings over one session.
public struct LeadTimeReport: Sendable, Equatable, Codable {
    /// Per stall: seconds from the start of the warning run that reaches the
    /// stall to the stall (0 when the last sample before it did not warn).
    public var leadSeconds: [Double]
    /// Stalls with no warning on the last sample before them.
    public var missedStalls: Int
}

public enum StallMetrics {
    /// ROC AUC by the Mann–Whitney statistic, ties counted one half.
    /// nil without both positives and negatives.
    public static func rocAUC(scores: [Double], labels: [Bool]) -> Double? {
        precondition(scores.count == labels.count)
        let nPos = labels.filter { $0 }.count, nNeg = labels.count - nPos
        guard nPos > 0, nNeg > 0 else { return nil }
        // Average ranks over ties.
        let order = scores.indices.sorted { scores[$0] < scores[$1] }
        var ranks = [Double](repeating: 0, count: scores.count)
        var i = 0
        while i < order.count {
            var j = i
            while j + 1 < order.count, scores[order[j + 1]] == scores[order[i]] { j += 1 }
            let avg = Double(i + j) / 2 + 1
            for k in i...j { ranks[order[k]] = avg }
            i = j + 1
        }
        let posRankSum = zip(ranks, labels).filter { $0.1 }.map(\.0).reduce(0, +)
        return (posRankSum - Double(nPos) * Double(nPos + 1) / 2) / (Double(nPos) * Double(nNeg))
    }

    /// Predicted positive when score ≥ threshold.
    public static func precisionRecall(scores: [Double], labels: [Bool], threshold: Double) -> PrecisionRecall {
        var tp = 0, fp = 0, fn = 0
        for (s, y) in zip(scores, labels) {
            let warn = s >= threshold
            if warn && y { tp += 1 } else if warn { fp += 1 } else if y { fn += 1 }
        }
        return PrecisionRecall(
            threshold: threshold, truePositives: tp, falsePositives: fp, falseNegatives: fn,
            precision: tp + fp > 0 ? Double(tp) / Double(tp + fp) : nil,
            recall: tp + fn > 0 ? Double(tp) / Double(tp + fn) : nil)
    }

    /// Mean squared error of the probabilities against 0/1 outcomes.
    public static func brierScore(scores: [Double], labels: [Bool]) -> Double? {
        guard !scores.isEmpty else { return nil }
        return zip(scores, labels).map { s, y in (s - (y ? 1 : 0)) * (s - (y ? 1 : 0)) }.reduce(0, +) / Double(scores.count)
    }

    /// Reliability table with `binCount` equal-width bins over [0, 1].
    public static func calibration(scores: [Double], labels: [Bool], binCount: Int = 10) -> [CalibrationBin] {
        precondition(binCount > 0)
        var sums = [Double](repeating: 0, count: binCount), hits = [Int](repeating: 0, count: binCount)
        var counts = [Int](repeating: 0, count: binCount)
        for (s, y) in zip(scores, labels) {
            let b = min(binCount - 1, max(0, Int(saturating: (s * Double(binCount)).rounded(.down))))
            counts[b] += 1
            sums[b] += s
            if y { hits[b] += 1 }
        }
        return (0..<binCount).map { b in
            CalibrationBin(
                lower: Double(b) / Double(binCount), upper: Double(b + 1) / Double(binCount), count: counts[b],
                meanPredicted: counts[b] > 0 ? sums[b] / Double(counts[b]) : nil,
                observedRate: counts[b] > 0 ? Double(hits[b]) / Double(counts[b]) : nil)
        }
    }

    /// Lead time per stall in one session. `scored` are (time, score) of the
    /// non-stalled samples in time order. For each stall start s, the samples
    /// in [s − lookbackSeconds, s) are examined (lookback defaults to H: an
    /// earlier warning is not a prediction of this stall); the lead is s minus
    /// the time of the first sample of the unbroken run of warnings
    /// (score ≥ threshold) that ends at the last sample before s. A stall
    /// whose last preceding sample did not warn (or has no sample) is missed.
    public static func leadTimes(
        scored: [(timeSeconds: Double, score: Double)], stallStarts: [Double],
        threshold: Double, lookbackSeconds: Double
    ) -> LeadTimeReport {
        var leads: [Double] = [], missed = 0
        for s in stallStarts.sorted() {
            let window = scored.filter { $0.timeSeconds >= s - lookbackSeconds && $0.timeSeconds < s }
            guard let last = window.last, last.score >= threshold else { missed += 1; continue }
            var first = last.timeSeconds
            for w in window.reversed() {
                guard w.score >= threshold else { break }
                first = w.timeSeconds
            }
            leads.append(s - first)
        }
        return LeadTimeReport(leadSeconds: leads, missedStalls: missed)
    }

    /// Median (nil when empty); the mean of the two middle values for an even count.
    public static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let v = values.sorted(), n = v.count
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2
    }
}
