"""Japanese tokenisation: Sudachi (A/C/CA), character n-grams, the default and content_terms."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from keiri_agent.search.tokenize import (
    DEFAULT_SUDACHI_MODE,
    CharNgramTokenizer,
    SudachiTokenizer,
    Tokenizer,
    content_terms,
    default_tokenizer,
    normalize_for_search,
)


@pytest.fixture(scope="module")
def sudachi_a() -> SudachiTokenizer:
    return SudachiTokenizer("A")


@pytest.fixture(scope="module")
def sudachi_c() -> SudachiTokenizer:
    return SudachiTokenizer("C")


def test_full_width_input_matches_half_width(sudachi_a: SudachiTokenizer) -> None:
    assert sudachi_a.terms("ＸＹＺシステム") == sudachi_a.terms("XYZシステム")
    assert sudachi_a.terms("有効期限は９０日") == sudachi_a.terms("有効期限は90日")
    assert "xyz" in sudachi_a.terms("ＸＹＺ")
    assert "90" in sudachi_a.terms("９０日")


def test_particles_auxiliaries_and_symbols_are_dropped(sudachi_a: SudachiTokenizer) -> None:
    terms = sudachi_a.terms("パスワードの有効期限は90日です。変更してください！")
    assert terms == ["パスワード", "有効", "期限", "90", "日", "変更"]


def test_latin_codes_stay_one_term(sudachi_a: SudachiTokenizer) -> None:
    assert "e1023" in sudachi_a.terms("エラーコードE1023が表示された")
    assert "e1023" in sudachi_a.terms("Ｅ１０２３")
    assert "v1.2.3" in sudachi_a.terms("v1.2.3を使う")
    assert "12000" in sudachi_a.terms("金額は12,000円")


def test_compound_words_by_split_mode(
    sudachi_a: SudachiTokenizer, sudachi_c: SudachiTokenizer
) -> None:
    text = "経費精算システムで源泉徴収票を再発行"
    assert {"経費", "精算", "システム", "源泉", "徴収", "票"} <= set(sudachi_a.terms(text))
    assert {"経費精算システム", "源泉徴収票"} <= set(sudachi_c.terms(text))
    both = SudachiTokenizer("CA").terms(text)
    assert {"経費精算システム", "経費", "精算", "システム"} <= set(both)


def test_normalized_form_unifies_variants(sudachi_a: SudachiTokenizer) -> None:
    assert sudachi_a.terms("ﾊﾟｽﾜｰﾄﾞ") == ["パスワード"]


def test_empty_and_symbol_only_text(sudachi_a: SudachiTokenizer) -> None:
    assert sudachi_a.terms("") == []
    assert sudachi_a.terms("  \n。、！") == []


def test_long_text_is_tokenised_in_segments(sudachi_a: SudachiTokenizer) -> None:
    text = "経費精算" * 5000  # one 20,000-character line: over Sudachi's input limit
    assert len(sudachi_a.terms(text)) == 10000


def test_unknown_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match="split mode"):
        SudachiTokenizer("X")  # type: ignore[arg-type]


def test_char_bigrams() -> None:
    tokenizer = CharNgramTokenizer(2)
    assert tokenizer.name == "char2gram"
    assert tokenizer.terms("ＸＹＺ経費精算 E1023") == ["xyz", "経費", "費精", "精算", "e1023"]
    assert tokenizer.terms("表") == ["表"]
    with pytest.raises(ValueError):
        CharNgramTokenizer(0)


def test_tokenizers_satisfy_the_protocol(sudachi_a: SudachiTokenizer) -> None:
    assert isinstance(sudachi_a, Tokenizer)
    assert isinstance(CharNgramTokenizer(), Tokenizer)
    assert sudachi_a.name == "sudachi-core-A"


def test_default_tokenizer_is_cached_sudachi() -> None:
    first = default_tokenizer()
    assert first is default_tokenizer()
    assert isinstance(first, SudachiTokenizer)
    assert first.mode == DEFAULT_SUDACHI_MODE


def test_default_tokenizer_is_created_once_across_threads() -> None:
    barrier = threading.Barrier(8)

    def get() -> int:
        barrier.wait()
        return id(default_tokenizer())

    with ThreadPoolExecutor(8) as pool:
        assert len(set(pool.map(lambda _: get(), range(8)))) == 1


def test_content_terms_deduplicated_in_order() -> None:
    terms = content_terms("パスワードを変更。パスワードの有効期限はＸＹＺで確認")
    assert terms[0] == "パスワード"
    assert terms.count("パスワード") == 1
    assert "xyz" in terms
    assert terms == list(dict.fromkeys(terms))


def test_sudachi_is_safe_from_many_threads(sudachi_a: SudachiTokenizer) -> None:
    texts = [f"経費精算の申請は毎月{i}日までに行ってください。" * 20 for i in range(1, 41)]
    serial = [sudachi_a.terms(text) for text in texts]
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(sudachi_a.terms, texts)) == serial


def test_normalize_for_search() -> None:
    assert normalize_for_search("ＡＢＣ１２３ｶﾞ") == "abc123ガ"


def test_english_dictionary_entries_are_their_words_not_a_katakana_reading() -> None:
    """Sudachi has entries such as "What's", "is it" and "plan do" read in katakana
    (ホワッツ, イズイット, プラン・ドゥ): a question's English words stay English words."""
    from keiri_agent.search.tokenize import content_words

    words = content_words("What's the rate limit? Is it free on the plan do tier? v8.1")
    assert not any("ホワッツ" in w or "イズイット" in w or "プラン" in w for w in words)
    assert {"what", "rate", "limit", "plan", "free", "v8.1"} <= set(words)


def test_adverbs_and_misread_hiragana_are_no_words_of_a_question() -> None:
    """「もし」「全然」 say how, not what; 「GuestGateのどの」 is not 「のど」 (喉)."""
    from keiri_agent.search.tokenize import content_words

    assert content_words("もし社内のネットが落ちたら") == ["社内", "ネット", "落ちる"]
    assert "喉" not in content_words("GuestGateのどのメニューから入れますか")
    assert content_words("全然反応がない") == ["反応"]


def test_loanword_is_how_a_japanese_text_writes_an_english_word() -> None:
    from keiri_agent.search.tokenize import is_adverbial, loanword

    assert loanword("printer") == "プリンター"
    assert loanword("plan") == "プラン"
    assert loanword("sandbox") == ""  # no dictionary entry in katakana
    assert loanword("プラン") == ""
    assert is_adverbial("来週") and is_adverbial("今回は")
    assert not is_adverbial("パスワードの条件")
