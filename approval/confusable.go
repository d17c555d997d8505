package approval

import "strings"

// The look-alikes [SamePerson] folds into Latin letters: what TR39's
// confusables call a skeleton, over a list kept here rather than the whole
// Unicode table (ADR 0066). The list covers the scripts whose letters are
// drawn like Latin ones in common fonts, and over-reaches on purpose where
// a letter is only close: a false match costs a third approver, a missed
// one lets a person approve their own request. Each entry is tested
// (TestLookalikes).
//
// Entries are looked up in NFD, so precomposed letters arrive split ("ё"
// as "е" and a diaeresis, dropped later), and again in NFKD, where
// compatibility forms (full-width, mathematical, ligatures) have become
// their plain letters.

// lookalikes maps lower-case look-alikes to Latin lower case, and
// Cherokee's capitals (which stand for its small letters too). It is used
// after case folding as well as without it.
var lookalikes = map[rune]rune{
	// Cyrillic
	'а': 'a', 'в': 'b', 'ь': 'b', 'с': 'c', 'ԁ': 'd', 'е': 'e', 'һ': 'h', 'н': 'h', 'і': 'i', 'ј': 'j', 'к': 'k',
	'ӏ': 'l', 'м': 'm', 'п': 'n', 'о': 'o', 'р': 'p', 'ԛ': 'q', 'г': 'r', 'ѕ': 's', 'т': 't', 'ц': 'u', 'ѵ': 'v',
	'ԝ': 'w', 'х': 'x', 'у': 'y', 'ү': 'y', 'з': '3', 'ѡ': 'w',
	// Greek
	'α': 'a', 'β': 'b', 'ϲ': 'c', 'ε': 'e', 'η': 'n', 'ι': 'i', 'ϳ': 'j', 'κ': 'k', 'μ': 'u', 'ν': 'v', 'ο': 'o',
	'ρ': 'p', 'σ': 'o', 'ς': 'c', 'τ': 't', 'υ': 'u', 'χ': 'x', 'γ': 'y', 'ω': 'w', 'ϱ': 'p', 'ϰ': 'k',
	// Armenian
	'ա': 'w', 'հ': 'h', 'ո': 'n', 'ս': 'u', 'օ': 'o', 'զ': 'q', 'ց': 'g', 'ք': 'p', 'լ': 'l',
	// Hebrew and Arabic letters and digits drawn like "l" and "o"
	'ו': 'l', 'ן': 'l', 'ס': 'o', '١': 'l', '۱': 'l', '٥': 'o', '۵': 'o', 'ه': 'o', 'ھ': 'o',
	// Latin letters outside ASCII, IPA and small capitals
	'ı': 'i', 'ȷ': 'j', 'ɑ': 'a', 'ɡ': 'g', 'ɩ': 'i', 'ǀ': 'l', 'ɪ': 'i', 'ʏ': 'y', 'ɴ': 'n', 'ʀ': 'r', 'ʜ': 'h',
	'ʙ': 'b', 'ɢ': 'g', 'ʟ': 'l', 'ᴀ': 'a', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e', 'ᴊ': 'j', 'ᴋ': 'k', 'ᴍ': 'm', 'ᴏ': 'o',
	'ᴘ': 'p', 'ᴛ': 't', 'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w', 'ᴢ': 'z', 'ꜱ': 's', 'ƅ': 'b', 'ɒ': 'a', 'ø': 'o',
	// Cherokee capitals; its small letters are looked up as them
	'Ꭺ': 'a', 'Ᏼ': 'b', 'Ꮯ': 'c', 'Ꭰ': 'd', 'Ꭼ': 'e', 'Ꮐ': 'g', 'Ꮋ': 'h', 'Ꭵ': 'i', 'Ꭻ': 'j', 'Ꮶ': 'k',
	'Ꮮ': 'l', 'Ꮇ': 'm', 'Ꮲ': 'p', 'Ꭱ': 'r', 'Ꮪ': 's', 'Ꭲ': 't', 'Ꮩ': 'v', 'Ꮃ': 'w', 'Ꮓ': 'z',
}

// casedLookalikes maps capital look-alikes to Latin capitals, and the
// ASCII look-alikes that case folding would part ("I" folds to "i", not
// to the "l" it is drawn like). It is used only without case folding.
var casedLookalikes = map[rune]rune{
	// Cyrillic
	'А': 'A', 'В': 'B', 'С': 'C', 'Е': 'E', 'Н': 'H', 'І': 'l', 'Ј': 'J', 'К': 'K', 'М': 'M', 'О': 'O', 'Р': 'P',
	'Ѕ': 'S', 'Т': 'T', 'Х': 'X', 'У': 'Y', 'Ү': 'Y', 'Ԛ': 'Q', 'Ԝ': 'W', 'Ӏ': 'l', 'З': '3', 'Ь': 'b', 'Ԁ': 'D',
	// Greek
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'l', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O', 'Ρ': 'P',
	'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'Ϲ': 'C', 'Ϳ': 'J',
	// Armenian
	'Օ': 'O', 'Ս': 'U', 'Տ': 'S', 'Լ': 'L',
	// ASCII
	'I': 'l', '1': 'l', '|': 'l', '0': 'O',
}

// lookalikeSequences are the letter pairs drawn like one letter.
var lookalikeSequences = strings.NewReplacer("rn", "m", "vv", "w", "cl", "d")
