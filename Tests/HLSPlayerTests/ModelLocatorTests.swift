// Where an installed or a checked-out hlsplay looks for its stall model (docs/install.md): the
// installed layout beside the executable first, then a checkout, then the usual prefixes.

import Foundation
import Testing
@testable import HLSPlayer

@Suite struct ModelLocatorTests {
    @Test func anInstalledBinary_looksInItsPrefixShareFolderFirst() {
        let paths = ModelLocator.candidatePaths(
            executable: URL(fileURLWithPath: "/opt/tools/bin/hlsplay"), currentDirectory: URL(fileURLWithPath: "/home/u/work"))
        #expect(paths.first == "/opt/tools/share/hlsplay/models/stall-logistic-v2.json")
        #expect(paths[1] == "/home/u/work/models/stall-logistic-v2.json")
        #expect(paths.contains("/opt/tools/bin/models/stall-logistic-v2.json"))
        #expect(
            Array(paths.suffix(2)) == [
                "/usr/local/share/hlsplay/models/stall-logistic-v2.json", "/usr/share/hlsplay/models/stall-logistic-v2.json"
            ])
        #expect(Set(paths).count == paths.count)
    }

    @Test func aCheckoutBuild_findsTheRepositoryModelsFolder() {
        let paths = ModelLocator.candidatePaths(
            executable: URL(fileURLWithPath: "/src/hlsplay/.build/x86_64-unknown-linux-gnu/release/hlsplay"),
            currentDirectory: URL(fileURLWithPath: "/"))
        #expect(paths.contains("/src/hlsplay/models/stall-logistic-v2.json"))
        let installed = paths.firstIndex(of: "/src/hlsplay/.build/x86_64-unknown-linux-gnu/share/hlsplay/models/stall-logistic-v2.json")
        let checkout = paths.firstIndex(of: "/src/hlsplay/models/stall-logistic-v2.json")
        #expect(installed != nil && checkout != nil && installed! < checkout!)
    }

    @Test func withNoExecutablePath_theCurrentDirectoryAndPrefixesRemain() {
        let paths = ModelLocator.candidatePaths(executable: nil, currentDirectory: URL(fileURLWithPath: "/w"))
        #expect(
            paths == [
                "/w/models/stall-logistic-v2.json", "/usr/local/share/hlsplay/models/stall-logistic-v2.json",
                "/usr/share/hlsplay/models/stall-logistic-v2.json"
            ])
    }
}
