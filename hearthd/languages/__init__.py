"""Each language's own code, where its data files cannot say it: one module per language code, read when the
language is installed (hearthd.language.rules). A module gives `RULES`, any of LanguageRules' code fields: `plural`
(n → the noun form), `number_words` (a number said as words), `reads_latin` (Latin-letter text that is this
language), `transcript` (a transcript put in the language's own script). A language without a module gets the
defaults, never another language's code; the rest of hearthd names no language.
"""
