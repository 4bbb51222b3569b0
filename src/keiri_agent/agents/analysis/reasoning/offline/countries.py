"""Countries said in another form than the data holds them, as data.

Trade, remittance and freight exports hold a country as an ISO code (``TH``), an English
name (``Mexico``) or a Japanese one (メキシコ), and a request may say any of the three:
"remittances to Thailand" on a column of codes, 「メキシコ向け」 on one of English names.
``country_aliases`` gives, for a value that is a country in one form, its other forms.
A value that is no country here has none: nothing is guessed.
"""

from __future__ import annotations

from collections.abc import Sequence

# ISO 3166 alpha-2 code, English names, Japanese names (the usual one first).
_COUNTRIES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("JP", ("japan",), ("日本",)),
    ("US", ("united states", "usa", "america"), ("アメリカ", "米国", "アメリカ合衆国")),
    ("CN", ("china",), ("中国",)),
    ("KR", ("south korea", "korea"), ("韓国",)),
    ("TW", ("taiwan",), ("台湾",)),
    ("HK", ("hong kong",), ("香港",)),
    ("TH", ("thailand",), ("タイ",)),
    ("VN", ("vietnam", "viet nam"), ("ベトナム",)),
    ("SG", ("singapore",), ("シンガポール",)),
    ("MY", ("malaysia",), ("マレーシア",)),
    ("ID", ("indonesia",), ("インドネシア",)),
    ("PH", ("philippines", "the philippines"), ("フィリピン",)),
    ("IN", ("india",), ("インド",)),
    ("BD", ("bangladesh",), ("バングラデシュ",)),
    ("KH", ("cambodia",), ("カンボジア",)),
    ("MM", ("myanmar",), ("ミャンマー",)),
    ("AU", ("australia",), ("オーストラリア", "豪州")),
    ("NZ", ("new zealand",), ("ニュージーランド",)),
    ("CA", ("canada",), ("カナダ",)),
    ("MX", ("mexico",), ("メキシコ",)),
    ("BR", ("brazil",), ("ブラジル",)),
    ("AR", ("argentina",), ("アルゼンチン",)),
    ("CL", ("chile",), ("チリ",)),
    ("GB", ("united kingdom", "uk", "britain", "great britain"), ("イギリス", "英国")),
    ("DE", ("germany",), ("ドイツ",)),
    ("FR", ("france",), ("フランス",)),
    ("IT", ("italy",), ("イタリア",)),
    ("ES", ("spain",), ("スペイン",)),
    ("NL", ("netherlands", "the netherlands", "holland"), ("オランダ",)),
    ("BE", ("belgium",), ("ベルギー",)),
    ("CH", ("switzerland",), ("スイス",)),
    ("SE", ("sweden",), ("スウェーデン",)),
    ("NO", ("norway",), ("ノルウェー",)),
    ("DK", ("denmark",), ("デンマーク",)),
    ("FI", ("finland",), ("フィンランド",)),
    ("PL", ("poland",), ("ポーランド",)),
    ("AT", ("austria",), ("オーストリア",)),
    ("IE", ("ireland",), ("アイルランド",)),
    ("PT", ("portugal",), ("ポルトガル",)),
    ("CZ", ("czech republic", "czechia"), ("チェコ",)),
    ("TR", ("turkey", "turkiye"), ("トルコ",)),
    ("AE", ("united arab emirates", "uae"), ("アラブ首長国連邦", "UAE")),
    ("SA", ("saudi arabia",), ("サウジアラビア",)),
    ("IL", ("israel",), ("イスラエル",)),
    ("ZA", ("south africa",), ("南アフリカ",)),
    ("EG", ("egypt",), ("エジプト",)),
    ("RU", ("russia",), ("ロシア",)),
)
_BY_FORM: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {}
for _entry in _COUNTRIES:
    for _form in (_entry[0].lower(), *_entry[1], *_entry[2]):
        _BY_FORM.setdefault(_form.lower(), _entry)


def country_column_forms(examples: Sequence[str]) -> dict[str, str]:
    """For a column whose examples are all countries in one form (codes, English names or
    Japanese names), every country of the table as that column would hold it, by each
    form a request may say it in ("france", フランス → "FR" on a column of codes): a
    country the examples do not show is still read as one, so 「フランス向け」 keeps the
    rows of France (none, if there are none) instead of every row."""
    entries = [_BY_FORM.get(e.strip().lower()) for e in examples]
    if len(examples) < 2 or any(entry is None for entry in entries):
        return {}
    if all(e.strip().isascii() and len(e.strip()) == 2 and e.strip().isupper() for e in examples):
        held = lambda entry: entry[0]  # noqa: E731
    elif all(not e.isascii() for e in examples):
        held = lambda entry: entry[2][0]  # noqa: E731
    elif all(e.isascii() and len(e.strip()) > 2 for e in examples):
        held = lambda entry: entry[1][0].title()  # noqa: E731
    else:
        return {}
    return {form: held(entry) for entry in _COUNTRIES for form in (*entry[1], *entry[2])}


def country_aliases(value: str) -> list[str]:
    """The other forms of a country value ("TH" → thailand, タイ; メキシコ → mexico, MX);
    none for a value that is no country here. A code is never given as an alias of a
    name: two letters said in a request are too often something else."""
    entry = _BY_FORM.get(value.strip().lower())
    if entry is None:
        return []
    _code, english, japanese = entry
    forms = [*english, *japanese]
    return [f for f in forms if f.lower() != value.strip().lower()]
