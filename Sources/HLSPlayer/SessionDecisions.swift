// Set-up shared by the real session (PlayerSession) and the virtual-time one
// (VirtualSession): which predictor a configuration gets (reading the model
// file, falling back with a problem to log; the policy controller starts in
// the core, `SessionCore.startPolicyController`). The
// decisions themselves are in HLSCore: the caps combine through
// `PeakBitrateCaps`, the over-selection cap moves by `OverSelectionCap`, a
// wedge's outcome is `WedgeRules`, the knobs meet the user's thresholds in
// `PolicyKnobs.apply`, the features are `StallFeatures.atTick`.

import Foundation
import HLSCore

enum SessionDecisions {
    /// The predictor a configuration asks for; `problem` says why it fell back to the heuristic (logged by the caller).
    static func makePredictor(
        _ configuration: PlayerConfiguration, defaultModelPath: () -> String?
    )
        -> (predictor: (any StallPredictor)?, problem: String?)
    {
        switch configuration.predictor {
        case .off:
            return (nil, nil)
        case .heuristic:
            return (HeuristicPredictor(), nil)
        case .threshold:
            return (BufferThresholdPredictor(), nil)
        case .model:
            guard let path = configuration.modelPath ?? defaultModelPath() else {
                return (
                    HeuristicPredictor(),
                    "model file \(ModelLocator.modelFile) not found under PREFIX/\(ModelLocator.installedDataFolder) beside the executable, "
                        + "the current directory or a checkout above the executable (set HLSPLAY_MODEL or --model; "
                        + "docs/install.md has the lookup order); using the heuristic predictor"
                )
            }
            do {
                return (try LogisticModelPredictor(contentsOfFile: path, requiredHorizonSeconds: defaultStallHorizonSeconds), nil)
            } catch {
                return (HeuristicPredictor(), "cannot load the stall model \(path): \(error); using the heuristic predictor")
            }
        }
    }
}
