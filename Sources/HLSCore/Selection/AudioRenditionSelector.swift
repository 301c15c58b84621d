// Alternate audio: which EXT-X-MEDIA TYPE=AUDIO rendition to play with a
// variant (RFC 8216 §4.3.4.1, §4.3.4.1.1, §4.3.4.2).
//
// A pure function of the variant, the playlist's renditions and the user's
// preferences; it returns the choice with the rule that made it, for the log.
// Order of the rules (docs/renditions-and-failover.md):
//   1. the language the user asked for (`--audio-lang`),
//   2. the rendition playing before a variant switch (same NAME, else same
//      LANGUAGE), so a switch to a variant with another AUDIO group keeps
//      the language (§4.3.4.1.1: renditions of the same content in different
//      groups share NAME and LANGUAGE),
//   3. DEFAULT=YES,
//   4. the first AUTOSELECT=YES rendition in the system language,
//   5. the first rendition that is not an audio description
//      (CHARACTERISTICS public.accessibility.describes-video), else the first.
// A variant without AUDIO plays the audio muxed in its own segments; a chosen
// rendition without URI is also in the variant's segments (§4.3.4.1: "the
// Rendition is included in the Media Playlist of any EXT-X-STREAM-INF tag
// referencing this EXT-X-MEDIA tag").

import Foundation

/// What the user and the system ask of the audio.
public struct AudioPreferences: Sendable, Equatable, Codable {
    /// `--audio-lang`: an RFC 5646 language tag (`fr`, `en-US`); nil = no preference.
    public var requestedLanguage: String?
    /// The system's language (from LANG / LC_ALL / LC_MESSAGES, e.g. `en_GB.UTF-8`
    /// read as `en-GB`), used for AUTOSELECT=YES renditions; nil = unknown.
    public var systemLanguage: String?

    public init(requestedLanguage: String? = nil, systemLanguage: String? = nil) {
        self.requestedLanguage = requestedLanguage
        self.systemLanguage = systemLanguage
    }

    /// Reads a POSIX locale value (`fr_FR.UTF-8@euro`, `C`, `POSIX`) as a language
    /// tag (`fr-FR`); nil for `C`, `POSIX` and empty values.
    public static func languageTag(fromPOSIXLocale value: String?) -> String? {
        guard var s = value?.trimmingCharacters(in: .whitespaces), !s.isEmpty else { return nil }
        if let i = s.firstIndex(where: { $0 == "." || $0 == "@" }) { s = String(s[..<i]) }
        if s == "C" || s == "POSIX" || s.isEmpty { return nil }
        return s.replacingOccurrences(of: "_", with: "-")
    }
}

/// Which rule picked the rendition.
public enum AudioRenditionReason: String, Sendable, Equatable, Codable {
    /// The variant has no AUDIO attribute: its segments carry the audio.
    case noAudioGroup = "no-audio-group"
    /// LANGUAGE matches `--audio-lang` exactly (case-insensitive).
    case requestedLanguage = "requested-language"
    /// LANGUAGE has the same primary subtag as `--audio-lang` (`en` for `en-US`).
    case requestedLanguagePrefix = "requested-language-prefix"
    /// Same NAME as the rendition played before the variant switch.
    case previousName = "previous-name"
    /// Same LANGUAGE as the rendition played before the variant switch.
    case previousLanguage = "previous-language"
    /// DEFAULT=YES.
    case groupDefault = "default"
    /// AUTOSELECT=YES and LANGUAGE matches the system language (exactly or by primary subtag).
    case autoselectSystemLanguage = "autoselect-system-language"
    /// None of the above: the first rendition of the group (skipping audio descriptions).
    case firstInGroup = "first-in-group"
}

/// Where the chosen audio comes from.
public enum AudioSource: Sendable, Equatable {
    /// In the variant's own segments (no AUDIO group, or a rendition without URI).
    case variantSegments
    /// A separate Media Playlist (the rendition's URI).
    case renditionPlaylist(URL)
}

/// The choice, with everything the session log needs.
public struct AudioRenditionChoice: Sendable, Equatable {
    /// The rendition; nil when the variant has no AUDIO group.
    public var rendition: Rendition?
    /// Index of `rendition` in the renditions passed in.
    public var renditionIndex: Int?
    /// The variant's AUDIO group id.
    public var groupID: String?
    public var source: AudioSource
    public var reason: AudioRenditionReason
    /// `--audio-lang` was given but no rendition of the group matched it.
    public var requestedLanguageUnmatched: Bool
    /// One line for the log, e.g. `"Français" (fr) from group "aud": LANGUAGE matches --audio-lang fr`.
    public var detail: String
}

/// A variant whose AUDIO group cannot be played.
public struct AudioRenditionError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// AUDIO="x" but no EXT-X-MEDIA TYPE=AUDIO has GROUP-ID "x".
        case groupNotFound = "group-not-found"
    }
    public var kind: Kind
    public var groupID: String
    public var variantURI: URL
    public var description: String
    public init(kind: Kind, groupID: String, variantURI: URL, description: String) {
        self.kind = kind
        self.groupID = groupID
        self.variantURI = variantURI
        self.description = description
    }
}

public enum AudioRenditionSelector {
    /// The CHARACTERISTICS value of an audio description track (RFC 8216 §4.3.4.1):
    /// never picked by rules 3-5 unless it is the only rendition, only on request or by DEFAULT.
    public static let describesVideoCharacteristic = "public.accessibility.describes-video"

    /// Picks the audio for `variant`. `renditions` is the multivariant playlist's
    /// EXT-X-MEDIA list (all types; only TYPE=AUDIO is considered). `previous` is
    /// the rendition played before a variant switch, if any.
    public static func select(
        for variant: VariantStream, renditions: [Rendition], preferences: AudioPreferences,
        previous: Rendition? = nil
    ) throws(AudioRenditionError) -> AudioRenditionChoice {
        guard let groupID = variant.audioGroup else {
            return AudioRenditionChoice(
                rendition: nil, renditionIndex: nil, groupID: nil, source: .variantSegments,
                reason: .noAudioGroup, requestedLanguageUnmatched: false,
                detail: "variant \(variant.uri.lastPathComponent) has no AUDIO group: audio is in its segments")
        }
        let group = renditions.indices.filter { renditions[$0].type == .audio && renditions[$0].groupID == groupID }
        if group.isEmpty {
            let known = Set(renditions.filter { $0.type == .audio }.map(\.groupID)).sorted()
            let list =
                known.isEmpty ? "the playlist defines no AUDIO group" : "AUDIO groups defined: " + known.map { "\"\($0)\"" }.joined(separator: ", ")
            throw AudioRenditionError(
                kind: .groupNotFound, groupID: groupID, variantURI: variant.uri,
                description:
                    "variant \(variant.uri.lastPathComponent) names AUDIO group \"\(groupID)\" but no EXT-X-MEDIA TYPE=AUDIO has GROUP-ID=\"\(groupID)\" (\(list); RFC 8216 §4.3.4.2)"
            )
        }

        var unmatched = false
        var picked: (Int, AudioRenditionReason, String)?
        if let wanted = preferences.requestedLanguage?.trimmingCharacters(in: .whitespaces), !wanted.isEmpty {
            if let i = group.first(where: { sameLanguage(renditions[$0].language, wanted) }) {
                picked = (i, .requestedLanguage, "LANGUAGE matches --audio-lang \(wanted)")
            } else if let i = group.first(where: { samePrimaryLanguage(renditions[$0].language, wanted) }) {
                picked = (i, .requestedLanguagePrefix, "LANGUAGE has the primary subtag of --audio-lang \(wanted)")
            } else {
                unmatched = true
            }
        }
        if picked == nil, let previous {
            if let i = group.first(where: { renditions[$0].name == previous.name }) {
                picked = (i, .previousName, "same NAME as the rendition played before the switch")
            } else if previous.language != nil, let i = group.first(where: { sameLanguage(renditions[$0].language, previous.language!) }) {
                picked = (i, .previousLanguage, "same LANGUAGE as the rendition played before the switch")
            }
        }
        if picked == nil, let i = group.first(where: { renditions[$0].isDefault }) {
            picked = (i, .groupDefault, "DEFAULT=YES")
        }
        if picked == nil, let system = preferences.systemLanguage {
            let auto = group.filter { renditions[$0].autoselect && !isAudioDescription(renditions[$0]) }
            if let i = auto.first(where: { sameLanguage(renditions[$0].language, system) })
                ?? auto.first(where: { samePrimaryLanguage(renditions[$0].language, system) })
            {
                picked = (i, .autoselectSystemLanguage, "AUTOSELECT=YES in the system language \(system)")
            }
        }
        let (index, reason, why) =
            picked
            ?? (group.first { !isAudioDescription(renditions[$0]) } ?? group[0], .firstInGroup, "first rendition of the group")
        let r = renditions[index]
        var detail = "\"\(r.name)\"\(r.language.map { " (\($0))" } ?? "") from group \"\(groupID)\": \(why)"
        if unmatched, let wanted = preferences.requestedLanguage {
            detail +=
                "; no rendition in --audio-lang \(wanted) (languages: \(group.map { renditions[$0].language ?? "none" }.joined(separator: ", ")))"
        }
        return AudioRenditionChoice(
            rendition: r, renditionIndex: index, groupID: groupID,
            source: r.uri.map { .renditionPlaylist($0) } ?? .variantSegments,
            reason: reason, requestedLanguageUnmatched: unmatched, detail: detail)
    }

    static func isAudioDescription(_ r: Rendition) -> Bool {
        r.characteristics.contains(describesVideoCharacteristic)
    }

    /// Language tags compare case-insensitively (RFC 5646 §2.1.1).
    static func sameLanguage(_ a: String?, _ b: String) -> Bool {
        guard let a else { return false }
        return normalized(a) == normalized(b)
    }

    static func samePrimaryLanguage(_ a: String?, _ b: String) -> Bool {
        guard let a else { return false }
        return primary(a) == primary(b)
    }

    static func normalized(_ tag: String) -> String {
        tag.trimmingCharacters(in: .whitespaces).lowercased().replacingOccurrences(of: "_", with: "-")
    }

    static func primary(_ tag: String) -> String {
        String(normalized(tag).split(separator: "-", maxSplits: 1).first ?? "")
    }
}
