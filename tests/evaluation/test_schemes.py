"""Tokenisation schemes: each scheme's tokens on tricky text, defaults, errors, signatures (no database)."""

import socket
import sys
import unicodedata
from importlib import metadata

import pytest

from annotation.models import Tokenizer
from core import tokenisation
from evaluation.metrics.text import schemes
from evaluation.metrics.text.schemes import (
    SCHEMES,
    SchemeNotForLanguage,
    SchemeUnavailable,
    TextRejected,
    UnknownScheme,
    default_scheme,
    regex_unicode_version,
    scheme,
    scheme_for_language,
    text_signature,
    tokens_signature,
)
from evaluation.metrics.text.scoring import score_texts


def tokens(name: str, text: str, **kwargs) -> list[str]:
    return scheme(name).tokenize(text, **kwargs)


# --- the registry and the language setting ------------------------------------------------------


def test_registry_and_language_choices_agree():
    assert tuple(SCHEMES) == tokenisation.SCHEME_NAMES
    assert [value for value, _ in Tokenizer.choices] == list(SCHEMES)
    for name, label in Tokenizer.choices:
        assert label.startswith(name)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("en", "coco-ptb"),
        ("en-GB", "coco-ptb"),
        ("zh", "char"),
        ("zh-Hant", "char"),
        ("ZH_cn", "char"),
        ("yue", "char"),
        ("ja", "char"),
        ("th", "char"),
        ("lo", "char"),
        ("km", "char"),
        ("my", "char"),
        ("bo", "char"),
        ("de", "whitespace"),
        ("ko", "whitespace"),
        ("vi", "whitespace"),
        ("ar", "whitespace"),
        ("quz", "whitespace"),
    ],
)
def test_default_scheme_per_language(code, expected):
    assert default_scheme(code).name == expected
    assert tokenisation.default_scheme_name(code) == expected


def test_caption_length_counts_characters_for_languages_written_without_spaces():
    assert tokenisation.counts_characters("char", "de")
    assert tokenisation.counts_characters("jieba", "zh")
    assert tokenisation.counts_characters("xm3600-ptb", "zh")  # the script, whatever the scheme
    assert not tokenisation.counts_characters("whitespace", "de")
    assert not tokenisation.counts_characters("coco-ptb", "en")


# --- whitespace: the platform's rule, unchanged ---------------------------------------------------


def test_whitespace_scheme_is_the_platform_rule():
    assert tokens("whitespace", "A dog, sitting on a bench.") == ["a", "dog", "sitting", "on", "a", "bench"]
    assert tokens("whitespace", "Ein Hund, im PARK.", lowercase=False) == ["Ein", "Hund", "im", "PARK"]
    caption = "รถแข่งวินเทจจอดเรียงกัน"
    assert tokens("whitespace", caption) == [caption]  # why Thai needs another scheme


# --- char: grapheme clusters ----------------------------------------------------------------------


def test_char_chinese_every_character_and_latin_digit_runs_whole():
    assert tokens("char", "一只狗在草地上。") == ["一", "只", "狗", "在", "草", "地", "上"]
    assert tokens("char", "iPhone 12台") == ["iphone", "12", "台"]
    assert tokens("char", "两个人在玩Frisbee飞盘")[-3:] == ["frisbee", "飞", "盘"]
    assert tokens("char", "ｉＰｈｏｎｅを持つ") == ["ｉｐｈｏｎｅ", "を", "持", "つ"]
    assert tokens("char", "iPhone 12台", lowercase=False) == ["iPhone", "12", "台"]


def test_char_thai_vowels_and_tone_marks_stay_with_their_consonant():
    caption = "แม่น้ำที่สวยงาม"
    found = tokens("char", caption)
    assert found == ["แ", "ม่", "น้ำ", "ที่", "ส", "ว", "ย", "ง", "า", "ม"]
    assert "".join(found) == caption
    assert all(unicodedata.category(token[0])[0] != "M" for token in found)


def test_char_zero_width_and_format_characters_are_never_tokens():
    assert tokens("char", "猫\u200bが\u200b寝\u2060る") == ["猫", "が", "寝", "る"]
    assert tokens("char", "\u200b \ufeff") == []
    assert tokens("char", "一\u3000只 \t狗") == ["一", "只", "狗"]


def test_char_emoji_with_skin_tone_flags_and_zwj_sequences_are_one_token_each():
    assert tokens("char", "👍🏽好") == ["👍🏽", "好"]
    assert tokens("char", "🇯🇵🇹🇭") == ["🇯🇵", "🇹🇭"]
    assert tokens("char", "👨\u200d👩\u200d👧") == ["👨\u200d👩\u200d👧"]


def test_char_decomposed_accent_is_one_token():
    assert tokens("char", "e\u0301t\u00e9") == ["été"]


# --- dictionary segmenters ------------------------------------------------------------------------


def test_jieba_segments_chinese_words():
    pytest.importorskip("jieba")
    assert tokens("jieba", "一只黑色的狗在草地上奔跑。") == [
        "一只",
        "黑色",
        "的",
        "狗",
        "在",
        "草地",
        "上",
        "奔跑",
    ]


def test_mecab_segments_japanese_words():
    pytest.importorskip("fugashi")
    assert tokens("mecab", "猫がソファの上で寝ている。") == [
        "猫",
        "が",
        "ソファ",
        "の",
        "上",
        "で",
        "寝",
        "て",
        "いる",
    ]


def test_newmm_segments_thai_words():
    pytest.importorskip("pythainlp")
    assert tokens("newmm", "แมวนอนอยู่บนโซฟาสีเทา ริมหน้าต่าง") == [
        "แมว",
        "นอน",
        "อยู่",
        "บน",
        "โซฟา",
        "สีเทา",
        "ริม",
        "หน้าต่าง",
    ]


def test_segmenters_load_offline_and_write_nothing(monkeypatch, tmp_path):
    pytest.importorskip("jieba")
    pytest.importorskip("fugashi")
    pytest.importorskip("pythainlp")

    def no_network(*args, **kwargs):
        raise AssertionError("a segmenter tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    for loader in (schemes._jieba, schemes._mecab, schemes._newmm):
        loader.cache_clear()
    try:
        assert tokens("jieba", "草地上的狗")
        assert tokens("mecab", "草の上の犬")
        assert tokens("newmm", "หมาบนหญ้า")
    finally:
        for loader in (schemes._jieba, schemes._mecab, schemes._newmm):
            loader.cache_clear()
    assert list(tmp_path.iterdir()) == []  # no ~/pythainlp-data, no jieba.cache


# --- PTB (another module; these run once it is there) ---------------------------------------------


def test_coco_ptb_and_xm3600_ptb_tokenise_with_the_ptb_module():
    ptb = pytest.importorskip("evaluation.metrics.text.ptb")
    caption = "A man's dog, running."
    assert tokens("coco-ptb", caption) == ptb.tokenize(caption)
    assert tokens("xm3600-ptb", caption) == ptb.tokenize(caption)
    assert scheme("coco-ptb").version() == ptb.VERSION
    assert (
        text_signature(scheme("coco-ptb"))
        == f"tok:coco-ptb@{ptb.VERSION}|case:lc|punct:ptb|df:test|impl:text-1"
    )
    assert scheme_for_language("zh", "xm3600-ptb").name == "xm3600-ptb"


# --- errors ---------------------------------------------------------------------------------------


def test_unknown_scheme_names_the_language():
    with pytest.raises(UnknownScheme, match=r"unknown tokenisation scheme 'words' for language “de”"):
        scheme_for_language("de", "words")
    with pytest.raises(UnknownScheme):
        score_texts({1: "a"}, {1: ["a"]}, language="de", scheme="words")


def test_no_language_and_no_scheme_is_an_error():
    with pytest.raises(schemes.SchemeError, match="no language and no tokenisation scheme"):
        scheme_for_language("", None)


def test_a_segmenter_for_another_language_is_refused():
    with pytest.raises(SchemeNotForLanguage, match=r"“newmm” is for th, not for language “ja”"):
        scheme_for_language("ja", "newmm")
    with pytest.raises(SchemeNotForLanguage, match="xm3600-ptb applies PTB to any language"):
        scheme_for_language("de", "coco-ptb")


def test_a_missing_library_is_named_with_the_scheme_and_language(monkeypatch):
    def not_installed(name):
        raise schemes.metadata.PackageNotFoundError(name)

    schemes._jieba.cache_clear()
    monkeypatch.setitem(sys.modules, "jieba", None)  # "import jieba" raises ImportError
    monkeypatch.setattr(schemes.metadata, "version", not_installed)
    try:
        with pytest.raises(
            SchemeUnavailable, match=r"“jieba” needs jieba, which is not installed.*language “zh”"
        ):
            scheme_for_language("zh", "jieba")
        with pytest.raises(SchemeUnavailable, match=r"“jieba” needs jieba.*language “zh”"):
            score_texts({1: "一只狗"}, {1: ["一只狗"]}, language="zh", scheme="jieba")
        with pytest.raises(SchemeUnavailable, match="cannot be imported"):
            scheme("jieba").tokenize("一只狗")
    finally:
        schemes._jieba.cache_clear()


def test_a_caption_the_segmenter_rejects_names_scheme_language_and_caption():
    pytest.importorskip("fugashi")
    with pytest.raises(
        TextRejected, match=r"“mecab” for language “ja” rejected the caption '猫\\x00犬'.*NUL"
    ):
        score_texts({1: "猫\x00犬"}, {1: ["猫と犬"]}, language="ja", scheme="mecab")
    with pytest.raises(TextRejected, match="UnicodeEncodeError"):
        scheme("mecab").tokenize("\ud800猫", language="ja")


# --- signatures -----------------------------------------------------------------------------------


def test_text_signature_format():
    unicode = unicodedata.unidata_version
    assert text_signature(scheme("whitespace")) == (
        f"tok:whitespace@1+unicode-{unicode}|case:lc|punct:unicode|df:test|impl:text-1"
    )
    grapheme = f"regex-{metadata.version('regex')}-unicode-{regex_unicode_version()}"
    assert text_signature("char", df_source="coco-train2014") == (
        f"tok:char@2+unicode-{unicode}+{grapheme}|case:lc|punct:unicode|df:coco-train2014|impl:text-1"
    )
    assert (
        text_signature("pretokenized") == "tok:pretokenized|case:as-given|punct:as-given|df:test|impl:text-1"
    )
    assert (
        tokens_signature("char", lowercase=False)
        == f"tok:char@2+unicode-{unicode}+{grapheme}|case:mixed|punct:unicode"
    )


def test_segmenter_signature_names_library_and_dictionary_versions():
    pytest.importorskip("fugashi")
    signature = text_signature("mecab")
    assert signature.startswith("tok:mecab@fugashi-1.5.2+unidic-lite-1.0.8|case:lc|punct:unicode|")


def test_score_report_carries_scheme_and_signature():
    report = score_texts({1: "一只狗在草地上"}, {1: ["一只狗在草地上。"]}, language="zh")
    assert report.scheme == "char"
    assert report.signature == text_signature("char")
    assert report.corpus["BLEU-1"] == pytest.approx(1.0)


def test_schemes_move_cider_a_lot_in_chinese():
    candidates = {1: "一只黑狗在草地上奔跑", 2: "两个孩子在海边玩沙子"}
    references = {
        1: ["一只黑色的狗在绿色的草地上奔跑", "草地上有一只狗在跑"],
        2: ["两个小孩在海滩上玩沙", "孩子们在海边堆沙堡"],
    }
    whole = score_texts(candidates, references, language="zh", scheme="whitespace", metrics=["CIDEr-D"])
    chars = score_texts(candidates, references, language="zh", scheme="char", metrics=["CIDEr-D"])
    assert whole.corpus["CIDEr-D"] == 0.0  # every caption is one token: no match at all
    assert chars.corpus["CIDEr-D"] > 0.5
    assert whole.signature != chars.signature


def test_the_char_signature_names_the_grapheme_library_and_the_unicode_it_implements():
    """Grapheme clusters come from ``regex``, which follows newer Unicode rules than Python's data (it
    joins the Khmer conjunct 'ឆ្កែ'): a ``regex`` upgrade must change the signature with the scores."""
    signature = text_signature("char")
    assert f"+regex-{metadata.version('regex')}-unicode-" in signature
    assert regex_unicode_version() not in {"unknown", unicodedata.unidata_version}
    assert scheme("char").tokenize("ឆ្កែ", language="km") == ["ឆ្កែ"]
