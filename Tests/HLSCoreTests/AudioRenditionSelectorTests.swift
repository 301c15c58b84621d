// Alternate audio rendition choice: each rule, its order against the next,
// and the error for a missing group.

import Foundation
import Testing
@testable import HLSCore

/// The multivariant playlist Samples/make-variants.sh writes as alt-audio/master.m3u8.
let altAudioMaster = """
    #EXTM3U
    #EXT-X-VERSION:4
    #EXT-X-INDEPENDENT-SEGMENTS
    #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2",URI="en/prog.m3u8"
    #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="Français",LANGUAGE="fr",DEFAULT=NO,AUTOSELECT=YES,CHANNELS="2",URI="fr/prog.m3u8"
    #EXT-X-STREAM-INF:BANDWIDTH=670284,AVERAGE-BANDWIDTH=647096,RESOLUTION=416x234,FRAME-RATE=24.000,CODECS="avc1.64000d,mp4a.40.2",AUDIO="aud"
    v0/prog.m3u8
    #EXT-X-STREAM-INF:BANDWIDTH=1359116,AVERAGE-BANDWIDTH=1307916,RESOLUTION=640x360,FRAME-RATE=24.000,CODECS="avc1.64001e,mp4a.40.2",AUDIO="aud"
    v1/prog.m3u8

    """

@Suite struct AudioRenditionSelectorTests {
    func audio(
        _ name: String, _ lang: String?, group: String = "g", isDefault: Bool = false, auto: Bool = false,
        uri: String? = nil, characteristics: [String] = []
    ) -> Rendition {
        Rendition(
            type: .audio, uri: uri.map { URL(string: "http://o/\($0)")! }, groupID: group, language: lang, name: name,
            isDefault: isDefault, autoselect: auto, characteristics: characteristics)
    }
    func variant(group: String? = "g") -> VariantStream {
        VariantStream(uri: URL(string: "http://o/v0/prog.m3u8")!, bandwidthBps: 1_000_000, audioGroup: group)
    }
    func pick(
        _ r: [Rendition], lang: String? = nil, system: String? = nil, previous: Rendition? = nil,
        group: String? = "g"
    ) throws -> AudioRenditionChoice {
        try AudioRenditionSelector.select(
            for: variant(group: group), renditions: r,
            preferences: AudioPreferences(requestedLanguage: lang, systemLanguage: system),
            previous: previous)
    }

    // MARK: the sample

    @Test func sample_noPreference_picksEnglishDefault() throws {
        let m = try multivariant(altAudioMaster)
        let c = try AudioRenditionSelector.select(for: m.variants[0], renditions: m.renditions, preferences: AudioPreferences())
        #expect(c.rendition?.language == "en")
        #expect(c.reason == .groupDefault)
        #expect(c.source == .renditionPlaylist(URL(string: "http://example.com/path/en/prog.m3u8")!))
        #expect(c.detail == "\"English\" (en) from group \"aud\": DEFAULT=YES")
    }

    @Test func sample_audioLangFr_picksFrench() throws {
        let m = try multivariant(altAudioMaster)
        let c = try AudioRenditionSelector.select(
            for: m.variants[1], renditions: m.renditions,
            preferences: AudioPreferences(requestedLanguage: "fr"))
        #expect(c.rendition?.name == "Français")
        #expect(c.renditionIndex == 1)
        #expect(c.reason == .requestedLanguage)
        #expect(c.source == .renditionPlaylist(URL(string: "http://example.com/path/fr/prog.m3u8")!))
    }

    // MARK: rule 1, --audio-lang

    @Test func requestedLanguage_caseInsensitive_beatsDefault() throws {
        let r = [audio("E", "en", isDefault: true, auto: true), audio("D", "DE-de")]
        let c = try pick(r, lang: "de-DE")
        #expect(c.renditionIndex == 1)
        #expect(c.reason == .requestedLanguage)
    }

    @Test func requestedLanguage_exactBeatsPrefix() throws {
        let r = [audio("US", "en-US"), audio("GB", "en-GB"), audio("EN", "en")]
        #expect(try pick(r, lang: "en").renditionIndex == 2)
        #expect(try pick(r, lang: "en-GB").renditionIndex == 1)
        let prefix = try pick(r, lang: "en-AU")
        #expect(prefix.renditionIndex == 0)
        #expect(prefix.reason == .requestedLanguagePrefix)
    }

    @Test func requestedLanguage_noMatch_fallsBackToDefault_andSaysSo() throws {
        let r = [audio("E", "en"), audio("F", "fr", isDefault: true, auto: true)]
        let c = try pick(r, lang: "ja")
        #expect(c.renditionIndex == 1)
        #expect(c.reason == .groupDefault)
        #expect(c.requestedLanguageUnmatched)
        #expect(c.detail.contains("no rendition in --audio-lang ja (languages: en, fr)"))
    }

    @Test func requestedLanguage_matchesOnlyInTheVariantsGroup() throws {
        let r = [audio("F other", "fr", group: "other"), audio("E", "en", group: "g")]
        let c = try pick(r, lang: "fr")
        #expect(c.renditionIndex == 1)
        #expect(c.requestedLanguageUnmatched)
    }

    // MARK: rule 2, the rendition before a variant switch

    @Test func previous_sameName_beatsDefault_butNotRequested() throws {
        let r = [audio("English", "en", isDefault: true, auto: true), audio("Français", "fr")]
        let prev = audio("Français", "fr", group: "lo")
        #expect(try pick(r, previous: prev).renditionIndex == 1)
        #expect(try pick(r, previous: prev).reason == .previousName)
        #expect(try pick(r, lang: "en", previous: prev).renditionIndex == 0)
    }

    @Test func previous_sameLanguage_whenNameDiffers() throws {
        let r = [audio("English", "en", isDefault: true), audio("French stereo", "fr")]
        let c = try pick(r, previous: audio("Français", "fr", group: "lo"))
        #expect(c.renditionIndex == 1)
        #expect(c.reason == .previousLanguage)
    }

    @Test func previous_noMatch_fallsThroughToDefault() throws {
        let r = [audio("English", "en"), audio("Deutsch", "de", isDefault: true)]
        #expect(try pick(r, previous: audio("Français", "fr")).reason == .groupDefault)
    }

    // MARK: rules 3-5

    @Test func default_beatsSystemLanguage() throws {
        let r = [audio("F", "fr", auto: true), audio("E", "en", isDefault: true, auto: true)]
        #expect(try pick(r, system: "fr-FR").renditionIndex == 1)
    }

    @Test func systemLanguage_needsAutoselect() throws {
        let noAuto = [audio("E", "en"), audio("F", "fr")]
        #expect(try pick(noAuto, system: "fr").reason == .firstInGroup)
        let auto = [audio("E", "en"), audio("F", "fr", auto: true)]
        let c = try pick(auto, system: "fr")
        #expect(c.renditionIndex == 1)
        #expect(c.reason == .autoselectSystemLanguage)
    }

    @Test func systemLanguage_byPrimarySubtag() throws {
        let r = [audio("E", "en", auto: true), audio("F", "fr", auto: true)]
        #expect(try pick(r, system: "fr-CA").renditionIndex == 1)
        #expect(try pick(r, system: "de-DE").reason == .firstInGroup)
    }

    @Test func first_skipsAudioDescription_unlessItIsAll() throws {
        let ad = AudioRenditionSelector.describesVideoCharacteristic
        let r = [audio("AD", "en", auto: true, characteristics: [ad]), audio("E", "en", auto: true)]
        #expect(try pick(r).renditionIndex == 1)
        #expect(try pick(r, system: "en").renditionIndex == 1)
        #expect(try pick([audio("AD", "en", characteristics: [ad])]).renditionIndex == 0)
        // On request it is chosen (first match in the language).
        #expect(try pick([audio("AD", "sv", characteristics: [ad]), audio("E", "en")], lang: "sv").renditionIndex == 0)
    }

    // MARK: muxed audio and errors

    @Test func noAudioGroup_audioIsInTheVariant() throws {
        let c = try pick([audio("E", "en")], lang: "en", group: nil)
        #expect(c.rendition == nil)
        #expect(c.source == .variantSegments)
        #expect(c.reason == .noAudioGroup)
    }

    @Test func renditionWithoutURI_isInTheVariantSegments() throws {
        let r = [audio("Main", "en", isDefault: true, auto: true), audio("F", "fr", uri: "fr.m3u8")]
        #expect(try pick(r).source == .variantSegments)
        #expect(try pick(r, lang: "fr").source == .renditionPlaylist(URL(string: "http://o/fr.m3u8")!))
    }

    @Test func missingGroup_throwsNamingGroupAndVariant() {
        let r = [audio("E", "en", group: "aac"), Rendition(type: .subtitles, uri: URL(string: "http://o/s.m3u8"), groupID: "g", name: "S")]
        #expect {
            _ = try pick(r)
        } throws: { error in
            guard let e = error as? AudioRenditionError else { return false }
            return e.kind == .groupNotFound && e.groupID == "g"
                && e.description
                    == "variant prog.m3u8 names AUDIO group \"g\" but no EXT-X-MEDIA TYPE=AUDIO has GROUP-ID=\"g\" (AUDIO groups defined: \"aac\"; RFC 8216 §4.3.4.2)"
        }
    }

    @Test func posixLocale_toLanguageTag() {
        #expect(AudioPreferences.languageTag(fromPOSIXLocale: "fr_FR.UTF-8") == "fr-FR")
        #expect(AudioPreferences.languageTag(fromPOSIXLocale: "de_DE@euro") == "de-DE")
        #expect(AudioPreferences.languageTag(fromPOSIXLocale: "en") == "en")
        #expect(AudioPreferences.languageTag(fromPOSIXLocale: "C.UTF-8") == nil)
        #expect(AudioPreferences.languageTag(fromPOSIXLocale: "POSIX") == nil)
        #expect(AudioPreferences.languageTag(fromPOSIXLocale: "") == nil)
        #expect(AudioPreferences.languageTag(fromPOSIXLocale: nil) == nil)
    }
}
