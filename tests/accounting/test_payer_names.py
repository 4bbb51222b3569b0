"""Payer names as banks print them, matched to a customer master: each rule, the
legal-form abbreviations in every position, and the cases left for a person."""

from __future__ import annotations

import pytest

from keiri_agent.accounting.payer_names import Customer, PayerMatcher, payer_key

MASTER = [
    Customer("C1", "株式会社山田商事", "ヤマダショウジ"),
    Customer("C2", "株式会社ミドリ", "ミドリ"),
    Customer("C3", "有限会社ミドリ", "ミドリ"),
    Customer("C4", "山田商店", "ヤマダショウテン"),
    Customer("C5", "サクラ物産株式会社", "サクラブッサン"),
    Customer("C6", "サクラ物産ロジスティクス株式会社", "サクラブッサンロジスティクス"),
    Customer("C7", "合同会社ぱれっと", "ぱれっと", aliases=("ﾊﾟﾚﾂﾄ ｼﾞﾑｷﾖｸ",)),
    Customer(
        "C8",
        "一般社団法人日本経理実務協会",
        "イッパンシャダンホウジンニホンケイリジツムキョウカイ",
    ),
    Customer(
        "C9",
        "株式会社ノースウエストエンジニアリングサービスアンドソリューションズ",
        "ノースウエストエンジニアリングサービスアンドソリューションズ",
    ),
    Customer("C10", "株式会社空欄", ""),
]


@pytest.mark.parametrize(
    ("payer", "core", "forms"),
    [
        ("ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", "ヤマダシヨジ", {"株式会社"}),
        ("ﾔﾏﾀﾞｼﾖｳｼﾞ(ｶ", "ヤマダシヨジ", {"株式会社"}),
        ("ﾔﾏﾀﾞｼﾖｳｼﾞ(ｶ)", "ヤマダシヨジ", {"株式会社"}),
        ("ﾔﾏﾀﾞ(ｶ)ｼﾖｳｼﾞ", "ヤマダシヨジ", {"株式会社"}),
        ("ﾕ)ﾐﾄﾞﾘ", "ミドリ", {"有限会社"}),
        ("ﾄﾞ)ﾊﾟﾚﾂﾄ", "パレツト", {"合同会社"}),
        ("カブシキガイシャ　ヤマダショウジ", "ヤマダシヨジ", {"株式会社"}),
        ("やまだしょうじ", "ヤマダシヨジ", set()),
        ("ﾉｰｽ-ｳｴｽﾄ", "ノスエスト", set()),
    ],
)
def test_a_name_comes_to_one_key_with_its_legal_form_aside(
    payer: str, core: str, forms: set[str]
) -> None:
    key = payer_key(payer)
    assert key.core == core
    assert key.legal_forms == forms


@pytest.mark.parametrize(
    ("payer", "expected", "rule"),
    [
        ("ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", "C1", "exact"),
        ("ﾔﾏﾀﾞｼﾖｳｼﾞ(ｶ", "C1", "exact"),
        ("ﾔﾏﾀﾞｼﾖｳｼﾞ ｵｵｻｶｼﾃﾝ", "C1", "first_word"),
        ("ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞｹｲﾘﾌﾞ", "C1", "prefix"),
        ("ｶ)ﾐﾄﾞﾘ", "C2", "exact"),
        ("ﾕ)ﾐﾄﾞﾘ", "C3", "exact"),
        ("ｻｸﾗﾌﾞﾂｻﾝﾛｼﾞｽﾃｲｸｽ(ｶ", "C6", "exact"),
        ("ｻｸﾗﾌﾞﾂｻﾝ(ｶ", "C5", "exact"),
        ("ﾊﾟﾚﾂﾄ ｼﾞﾑｷﾖｸ", "C7", "alias"),
        ("ｼﾔ)ﾆﾎﾝｹｲﾘｼﾞﾂﾑｷﾖｳｶｲ", "C8", "exact"),
        ("ｶ)ﾉｰｽｳｴｽﾄｴﾝｼﾞﾆｱﾘﾝｸﾞｻｰﾋﾞｽｱﾝﾄﾞｿﾘﾕｰｼﾖﾝｽﾞ"[:30], "C9", "truncated"),
    ],
)
def test_a_payer_is_matched_by_the_rule_that_says_why(payer: str, expected: str, rule: str) -> None:
    match = PayerMatcher(MASTER).match(payer)
    assert match.customer is not None and match.customer.id == expected, match
    assert match.candidates[0].rule == rule
    assert match.reason


@pytest.mark.parametrize(
    "payer",
    [
        "ﾐﾄﾞﾘ",  # 株式会社ミドリ or 有限会社ミドリ: the legal form is not shown
        "ﾔﾏﾀｼﾖｳｼﾞ",  # one sound off: another company, or a typo — a person decides
        "ﾔﾏﾀﾞｼﾖｳｶｲ",
        "ｶ)ﾀﾅｶｹﾝｾﾂ",  # nobody in the master
        "ｶ)ﾉｰｽｳｴｽﾄｴﾝｼﾞﾆｱ",  # the start of a long name, but not cut by the bank
        "",
    ],
)
def test_a_doubtful_payer_is_left_for_a_person_with_the_candidates(payer: str) -> None:
    match = PayerMatcher(MASTER).match(payer)
    assert match.customer is None
    assert match.reason


def test_an_ambiguous_payer_names_both_candidates() -> None:
    match = PayerMatcher(MASTER).match("ﾐﾄﾞﾘ")
    assert {candidate.customer.id for candidate in match.candidates[:2]} == {"C2", "C3"}
    assert "株式会社ミドリ" in match.reason and "有限会社ミドリ" in match.reason


def test_a_different_legal_form_is_said_and_lowers_the_score() -> None:
    master = [Customer("C3", "有限会社ミドリ", "ミドリ")]
    match = PayerMatcher(master).match("ｶ)ﾐﾄﾞﾘ")
    assert match.customer is None
    assert "法人格が違います" in match.candidates[0].reason


@pytest.mark.parametrize(
    ("payer", "core", "forms"),
    [
        ("0012345 ｶ)ﾔﾏﾀﾞｼﾖｳｼﾞ", "ヤマダシヨジ", {"株式会社"}),  # a reference number first
        ("ｺｳｴｷｻﾞｲﾀﾞﾝﾎｳｼﾞﾝ ﾐﾅﾐﾌﾞﾝｶ", "ミナミブンカ", {"財団法人"}),
        ("ｲﾘﾖｳﾎｳｼﾞﾝｼﾔﾀﾞﾝ ｱｵﾊﾞｶｲ", "アオバカイ", {"医療法人"}),
        ("NPOﾎｳｼﾞﾝ ﾐﾗｲﾉﾓﾘ", "ミライノモリ", {"特定非営利活動法人"}),
    ],
)
def test_reference_numbers_and_spelled_legal_forms_are_taken_out(
    payer: str, core: str, forms: set[str]
) -> None:
    key = payer_key(payer)
    assert key.core == core
    assert key.legal_forms == forms


def test_the_longer_name_that_explains_the_payer_wins_over_its_start() -> None:
    """サクラ物産ロジスティクス is not ambiguous with サクラ物産, which it starts with."""
    matcher = PayerMatcher(MASTER)
    for payer in ("ｻｸﾗﾌﾞﾂｻﾝ ﾛｼﾞｽﾃｲｸｽ(ｶ", "ｻｸﾗﾌﾞﾂｻﾝﾛｼﾞｽﾃｲｸｽ(ｶ)ｷﾀｶﾝﾄｳｾﾝﾀｰ"):
        match = matcher.match(payer)
        assert match.customer is not None and match.customer.id == "C6", match


def test_a_name_written_in_kana_is_its_own_reading() -> None:
    master = [Customer("K1", "株式会社ニッポンパッケージ", "")]
    match = PayerMatcher(master).match("ｶ)ﾆﾂﾎﾟﾝﾊﾟﾂｹｰｼﾞ ｺｳﾍﾞｴｲｷﾞﾖｳｼﾖ")
    assert match.customer is not None and match.customer.id == "K1"


@pytest.mark.parametrize(
    ("payer", "expected"),
    [
        ("ｶ)ﾐﾄﾞﾘ ｿｳﾑﾌﾞ", "C2"),  # a word of its own, the legal form agrees
        ("ｶ)ﾐﾄﾞﾘｹﾝｾﾂ", None),  # glued: the start of another company's name
        ("ﾐﾄﾞﾘ ｻｲﾄｳ", None),  # no legal form: a surname as well
    ],
)
def test_a_short_name_needs_more_than_a_prefix(payer: str, expected: str | None) -> None:
    master = [Customer("C2", "株式会社ミドリ", "ミドリ")]
    match = PayerMatcher(master).match(payer)
    assert (match.customer.id if match.customer else None) == expected, match


def test_a_master_without_kana_is_read_from_its_kanji_name_and_says_so() -> None:
    master = [Customer("K1", "株式会社鈴木製作所", ""), Customer("K2", "株式会社空欄", "")]
    match = PayerMatcher(master).match("ｶ)ｽｽﾞｷｾｲｻｸｼﾖ ﾊﾏﾏﾂｺｳｼﾞﾖｳ")
    assert match.customer is not None and match.customer.id == "K1"
    assert "推定" in match.reason
    assert match.candidates[0].score < 1.0  # a guessed reading counts less


@pytest.mark.parametrize(
    "payer",
    [
        "ﾀｶﾊｼ",  # 株式会社タカハシ, or the start of 高橋誠's name
        "ｶ)ﾐﾅﾄﾌｰｽﾞﾋｶﾞｼﾆﾎﾝ",  # another group company than the two on file
    ],
)
def test_a_name_another_customer_goes_on_from_is_left_for_a_person(payer: str) -> None:
    master = [
        Customer("K1", "株式会社タカハシ", "タカハシ"),
        Customer("K2", "高橋誠", "タカハシ マコト"),
        Customer("K3", "株式会社ミナトフーズ", "ミナトフーズ"),
        Customer("K4", "ミナトフーズ西日本株式会社", "ミナトフーズニシニホン"),
    ]
    match = PayerMatcher(master).match(payer)
    assert match.customer is None, match
    assert match.reason
    assert PayerMatcher(master).match("ｶ)ﾀｶﾊｼ").customer.id == "K1"  # type: ignore[union-attr]


def test_a_cell_far_longer_than_any_bank_name_is_not_compared() -> None:
    """A wrong column (a memo, a whole row) is said, not matched or compared slowly."""
    match = PayerMatcher(MASTER).match("ﾔﾏﾀﾞｼﾖｳｼﾞ" * 10_000)
    assert match.customer is None and "長すぎます" in match.reason
    assert match.candidates == ()


@pytest.mark.parametrize(
    ("name", "rest", "forms"),
    [
        ("株式会社山田商事", "山田商事", {"株式会社"}),
        ("山田商事㈱", "山田商事", {"株式会社"}),
        ("(有)ミドリ", "ミドリ", {"有限会社"}),
        ("医療法人社団 青葉会", "青葉会", {"医療法人"}),
        ("一般社団法人日本経理実務協会", "日本経理実務協会", {"社団法人"}),
        ("NPO法人みらいの森", "みらいの森", {"特定非営利活動法人"}),
        ("", "", set()),
    ],
)
def test_a_kanji_name_is_split_from_its_legal_form(name: str, rest: str, forms: set[str]) -> None:
    from keiri_agent.accounting.payer_names import split_legal_form

    assert split_legal_form(name) == (rest, frozenset(forms))


@pytest.mark.parametrize(
    ("typed", "printed"),
    [("キョーエーサンギョウ", "ｷﾖｳｴｲｻﾝｷﾞﾖｳ"), ("オーサカ", "ｵｵｻｶ"), ("ユーゲン", "ﾕｳｹﾞﾝ")],
)
def test_long_vowels_written_with_a_bar_or_a_kana_are_one_key(typed: str, printed: str) -> None:
    assert payer_key(typed).core == payer_key(printed).core


def test_a_sole_traders_owner_paying_in_full_name_is_the_customer() -> None:
    ota = Customer("C41", "太田塗装 太田勝", "オオタトソウ オオタマサル")
    suzuki = Customer("C42", "鈴木造園", "スズキゾウエン")
    matcher = PayerMatcher([ota, suzuki])
    found = matcher.match("ｵｵﾀ ﾏｻﾙ")
    assert found.customer == ota and "個人事業主" in found.reason
    assert matcher.match("ｵｵﾀ").customer is None  # a surname alone is not the owner
    assert matcher.match("ｽｽﾞｷ ﾀﾛｳ").customer is None


def test_a_name_in_latin_letters_matches_as_the_bank_prints_it() -> None:
    ktc = Customer("C40", "株式会社KTCホールディングス", "ケーティーシーホールディングス")
    assert PayerMatcher([ktc]).match("KTCﾎ-ﾙﾃﾞｲﾝｸﾞｽ(ｶ").customer == ktc


@pytest.mark.parametrize("payer", ["2505-048 ｶ)ｹｱﾌﾟﾗｽ", "0000104455ｶ)ｹｱﾌﾟﾗｽ", "ｺｷﾔｸNO.1042 ｶ)ｹｱﾌﾟﾗｽ"])
def test_a_number_typed_before_the_name_is_not_part_of_it(payer: str) -> None:
    assert payer_key(payer).core == payer_key("ケアプラス").core
