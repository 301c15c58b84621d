// The learned stall predictor: logistic regression whose parameters load from
// a versioned JSON model file (models/stall-logistic-v2.json, written by
// Tools/train/train.py). Inference is pure Swift; schema in
// docs/stall-prediction.md.
//
// For each feature i, with raw value x (nil = missing):
//
//     present:  z = (transform(clamp(x, clipMin, clipMax)) − mean) / std,  m = 0
//     missing:  z = (imputeValue − mean) / std,                           m = 1
//     logit = bias + Σ weight_i · z_i + Σ missingWeight_i · m_i
//     P = 1 / (1 + e^(−logit))
//
// `imputeValue` is in transformed space (the training mean of the present
// values unless the file says otherwise), so a missing value contributes only
// through its explicit missing-indicator weight.

import Foundation

/// The model file's schema identifier and the version this code reads.
public let stallModelSchemaName = "hlsplay.stall-model"
public let stallModelSchemaVersion = 1

public struct LogisticStallModel: Sendable, Equatable, Codable {
    public struct Feature: Sendable, Equatable, Codable {
        /// A StallFeatureName raw value.
        public var name: String
        /// `identity`, `log1p` (ln(1 + x), x ≥ 0 after clipping) or `log10` (x > 0 after clipping).
        public var transform: String
        /// Clipping applied to the raw value before the transform (nil = none).
        public var clipMin: Double?
        public var clipMax: Double?
        /// Value used in transformed space when the feature is missing.
        public var imputeValue: Double
        /// Standardization of the transformed value.
        public var mean: Double
        public var std: Double
        public var weight: Double
        /// Weight of the missing indicator (0 if the feature was never missing in training).
        public var missingWeight: Double

        public init(
            name: String, transform: String, clipMin: Double? = nil, clipMax: Double? = nil, imputeValue: Double,
            mean: Double, std: Double, weight: Double, missingWeight: Double
        ) {
            self.name = name
            self.transform = transform
            self.clipMin = clipMin
            self.clipMax = clipMax
            self.imputeValue = imputeValue
            self.mean = mean
            self.std = std
            self.weight = weight
            self.missingWeight = missingWeight
        }
    }

    /// Where the parameters came from. Free-form beyond these fields.
    public struct Provenance: Sendable, Equatable, Codable {
        public var tool: String
        public var dataSource: String
        public var trainTraces: [String]
        public var heldOutTraces: [String]
        public var trainExamples: Int
        public var trainPositives: Int
        public var l2Penalty: Double
        public var notes: String?
        /// Held-out metrics as reported by the trainer (AUC, precision, …).
        public var heldOutMetrics: [String: Double]?
    }

    public var schema: String
    public var schemaVersion: Int
    public var name: String
    /// Model version (semantic); bump on every retrain.
    public var version: String
    /// `logistic` (the only kind this loader reads).
    public var kind: String
    public var horizonSeconds: Double
    /// P at or above which the model "warns" (chosen on training data; used for
    /// precision/recall and as a suggestion for the controller's thresholds).
    public var operatingThreshold: Double
    public var bias: Double
    public var features: [Feature]
    public var training: Provenance
}

/// Why a model file could not be loaded. Each case names what was wrong.
public enum StallModelLoadError: Error, Sendable, Equatable {
    case unreadableFile(path: String, reason: String)
    case invalidJSON(reason: String)
    case unsupportedSchema(schema: String, version: Int)
    case unsupportedKind(String)
    case unknownFeature(String)
    case duplicateFeature(String)
    case unknownTransform(feature: String, transform: String)
    /// A parameter that is non-finite or out of range (std ≤ 0, threshold outside (0, 1), …).
    case invalidParameter(feature: String?, parameter: String)
    /// The model was trained for another horizon than the one asked for.
    case horizonMismatch(modelSeconds: Double, requestedSeconds: Double)
}

public struct LogisticModelPredictor: StallPredictor {
    enum Transform: String { case identity, log1p, log10 }

    struct CompiledFeature: Sendable {
        var name: StallFeatureName
        var transform: Transform
        var clipMin: Double?
        var clipMax: Double?
        var imputeZ: Double
        var mean: Double
        var std: Double
        var weight: Double
        var missingWeight: Double
    }

    public let model: LogisticStallModel
    let compiled: [CompiledFeature]

    public var horizonSeconds: Double { model.horizonSeconds }
    public var predictorName: String { "model:\(model.name)@\(model.version)" }
    public var operatingThreshold: Double { model.operatingThreshold }

    /// Validates the model. `requiredHorizonSeconds`, when given, must match the model's horizon.
    public init(model: LogisticStallModel, requiredHorizonSeconds: Double? = nil) throws(StallModelLoadError) {
        guard model.schema == stallModelSchemaName, model.schemaVersion == stallModelSchemaVersion else {
            throw .unsupportedSchema(schema: model.schema, version: model.schemaVersion)
        }
        guard model.kind == "logistic" else { throw .unsupportedKind(model.kind) }
        guard model.horizonSeconds.isFinite, model.horizonSeconds > 0 else {
            throw .invalidParameter(feature: nil, parameter: "horizonSeconds")
        }
        if let h = requiredHorizonSeconds, abs(h - model.horizonSeconds) > 1e-9 {
            throw .horizonMismatch(modelSeconds: model.horizonSeconds, requestedSeconds: h)
        }
        guard model.operatingThreshold > 0, model.operatingThreshold < 1 else {
            throw .invalidParameter(feature: nil, parameter: "operatingThreshold")
        }
        guard model.bias.isFinite else { throw .invalidParameter(feature: nil, parameter: "bias") }
        var seen = Set<StallFeatureName>()
        var compiled: [CompiledFeature] = []
        for f in model.features {
            guard let name = StallFeatureName(rawValue: f.name) else { throw .unknownFeature(f.name) }
            guard seen.insert(name).inserted else { throw .duplicateFeature(f.name) }
            guard let transform = Transform(rawValue: f.transform) else {
                throw .unknownTransform(feature: f.name, transform: f.transform)
            }
            for (label, v) in [
                ("imputeValue", f.imputeValue), ("mean", f.mean), ("weight", f.weight),
                ("missingWeight", f.missingWeight)
            ] where !v.isFinite {
                throw .invalidParameter(feature: f.name, parameter: label)
            }
            guard f.std.isFinite, f.std > 0 else { throw .invalidParameter(feature: f.name, parameter: "std") }
            if let lo = f.clipMin, let hi = f.clipMax, !(lo <= hi) {
                throw .invalidParameter(feature: f.name, parameter: "clipMin/clipMax")
            }
            if transform == .log10, !((f.clipMin ?? 0) > 0) {
                throw .invalidParameter(feature: f.name, parameter: "clipMin (log10 needs a positive floor)")
            }
            if transform == .log1p, !((f.clipMin ?? -1) >= 0) {
                throw .invalidParameter(feature: f.name, parameter: "clipMin (log1p needs a floor ≥ 0)")
            }
            compiled.append(
                CompiledFeature(
                    name: name, transform: transform, clipMin: f.clipMin, clipMax: f.clipMax,
                    imputeZ: (f.imputeValue - f.mean) / f.std, mean: f.mean, std: f.std,
                    weight: f.weight, missingWeight: f.missingWeight))
        }
        self.model = model
        self.compiled = compiled
    }

    /// Decodes and validates a model from JSON text.
    public init(jsonData: Data, requiredHorizonSeconds: Double? = nil) throws(StallModelLoadError) {
        let model: LogisticStallModel
        do {
            model = try JSONDecoder().decode(LogisticStallModel.self, from: jsonData)
        } catch {
            throw .invalidJSON(reason: String(describing: error))
        }
        try self.init(model: model, requiredHorizonSeconds: requiredHorizonSeconds)
    }

    /// Reads, decodes and validates a model file. (The one I/O in this type,
    /// for the runtime's convenience; tests pass JSON text.)
    public init(contentsOfFile path: String, requiredHorizonSeconds: Double? = nil) throws(StallModelLoadError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadableFile(path: path, reason: error.localizedDescription)
        }
        try self.init(jsonData: data, requiredHorizonSeconds: requiredHorizonSeconds)
    }

    /// The logit before the sigmoid (for logs and golden tests).
    public func logit(_ features: StallFeatures) throws -> Double {
        var logit = model.bias
        for f in compiled {
            if let raw = features.value(of: f.name) {
                guard raw.isFinite else { throw StallPredictionError.nonFiniteFeature(f.name) }
                var x = raw
                if let lo = f.clipMin { x = max(lo, x) }
                if let hi = f.clipMax { x = min(hi, x) }
                let t: Double =
                    switch f.transform {
                    case .identity: x
                    case .log1p: Foundation.log1p(x)
                    case .log10: Foundation.log10(x)
                    }
                logit += f.weight * (t - f.mean) / f.std
            } else {
                logit += f.weight * f.imputeZ + f.missingWeight
            }
        }
        guard logit.isFinite else { throw StallPredictionError.nonFiniteResult }
        return logit
    }

    public func stallProbability(_ features: StallFeatures) throws -> Double {
        let z = try logit(features)
        // Numerically stable sigmoid.
        return z >= 0 ? 1 / (1 + exp(-z)) : exp(z) / (1 + exp(z))
    }
}
