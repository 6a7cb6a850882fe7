"""String kernels on inputs beyond the conformance data: many regex constructs and UTF-8 text
(against ONNX Runtime 1.30, i.e. RE2), splitting with and without delimiters and maxsplit
(against Python's str.split, which the ONNX reference implementation uses; ONNX Runtime gives
0 substrings for "" with a delimiter where Python gives [""]), stop words and case changes
(against a plain Python reference: ONNX Runtime cannot build its locale on this machine),
TF-IDF weighting with skips (ONNX Runtime; a Python reference for string pools, where ONNX
Runtime 1.30 aborts)."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from onyx_harness import assert_outputs_close, run_onyx, run_ort, save_model

S = TensorProto.STRING


def model(node, inputs, outputs, opset, name):
    graph = helper.make_graph([node], name, inputs, outputs)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="onyx-tests")
    m.ir_version = 9
    return save_model(m, name + ".onnx")


def strings(*values):
    return np.array(values, dtype=np.str_)


TEXTS = strings("", "a", "aaab", "abab", "ababab", "cdcd", "abc-1234", "555-1234", "Hello", "hELLo",
                "a word here", "sword", "x", "xyz", "zz", "über", "Ünïcödé", "àéîõü", "tab\there", "line\nbreak",
                "user@mail.com", "a.b", "a+b", "[x]", "{2}", "aa", "aaaa")

PATTERNS = [r"a+b*", r"(ab|cd){2,3}", r"[^0-9]+", r"\d{3}-\d{4}", r"(?i)hello", r".*\bword\b.*", r"[[:alpha:]]+",
            r"x?y?z?", r"a{2,}", r"\w+@\w+\.com", r"ü.*", r"[à-ÿ]+", r"(?:a|b)*", r"a.b", r"a\.b", r"a\+b",
            r"\[x\]", r"\{2\}", r"[a-c]*-?\d*", r"\S+\s\S+", r".*", r"(?s).*", r"\x61+", r"(a|)+", r"(a*)*b?",
            r"^a{1,2}$", r"Ü[[:lower:]ïöé]*", r"\D\W?\w*"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_regex_full_match_matches_re2(pattern):
    node = helper.make_node("RegexFullMatch", ["x"], ["y"], pattern=pattern)
    path = model(node, [helper.make_tensor_value_info("x", S, [len(TEXTS)])],
                 [helper.make_tensor_value_info("y", TensorProto.BOOL, None)], 20,
                 f"regex_{PATTERNS.index(pattern)}")
    feeds = {"x": TEXTS}
    assert_outputs_close(run_ort(path, feeds), run_onyx(path, feeds))


def test_regex_rejects_lookahead():
    node = helper.make_node("RegexFullMatch", ["x"], ["y"], pattern="a(?=b)")
    path = model(node, [helper.make_tensor_value_info("x", S, [1])],
                 [helper.make_tensor_value_info("y", TensorProto.BOOL, None)], 20, "regex_lookahead")
    with pytest.raises(RuntimeError, match="look-around"):
        run_onyx(path, {"x": strings("ab")})


def test_regex_long_input_is_linear():
    node = helper.make_node("RegexFullMatch", ["x"], ["y"], pattern="(a|aa)*b")
    path = model(node, [helper.make_tensor_value_info("x", S, [2])],
                 [helper.make_tensor_value_info("y", TensorProto.BOOL, None)], 20, "regex_long")
    (got,) = run_onyx(path, {"x": strings("a" * 200000, "a" * 100000 + "b")})
    np.testing.assert_array_equal(got, [False, True])


@pytest.mark.parametrize("attrs", [{}, {"maxsplit": 1}, {"delimiter": ","}, {"delimiter": ",", "maxsplit": 2},
                                   {"delimiter": "ab"}, {"delimiter": ""}, {"maxsplit": 0}])
def test_string_split(attrs):
    node = helper.make_node("StringSplit", ["x"], ["y", "z"], **attrs)
    path = model(node, [helper.make_tensor_value_info("x", S, [2, 4])],
                 [helper.make_tensor_value_info("y", S, None), helper.make_tensor_value_info("z", TensorProto.INT64, None)],
                 20, "string_split_" + "_".join(f"{k}{v}" for k, v in attrs.items()).replace(",", "comma"))
    x = strings("  lead and  trail  ", "a,b,,c", ",,", "", "xabyabz", "tab\tsep\u3000new", "one", "a, b ,c ").reshape(2, 4)
    y, z = run_onyx(path, {"x": x})
    sep = attrs.get("delimiter") or None
    parts = [s.split(sep, attrs.get("maxsplit", -1)) for s in x.ravel().tolist()]
    width = max(len(p) for p in parts)
    assert z.tolist() == np.array([len(p) for p in parts]).reshape(2, 4).tolist()
    assert y.tolist() == np.array([p + [""] * (width - len(p)) for p in parts], dtype=object).reshape(2, 4, width).tolist()


def normalize_reference(words, action, sensitive, stopwords):
    stops = set(stopwords) if sensitive else {w.lower() for w in stopwords}
    kept = [w for w in words if (w if sensitive else w.lower()) not in stops]
    kept = [w.lower() if action == "LOWER" else w.upper() if action == "UPPER" else w for w in kept]
    return kept or [""]


@pytest.mark.parametrize("action,sensitive", [("LOWER", 0), ("UPPER", 0), ("NONE", 1), ("UPPER", 1)])
def test_string_normalizer(action, sensitive):
    stopwords = ["the", "And"]
    node = helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action=action, is_case_sensitive=sensitive,
                            stopwords=stopwords, locale="en_US")
    path = model(node, [helper.make_tensor_value_info("x", S, [1, 7])], [helper.make_tensor_value_info("y", S, None)],
                 10, f"strnorm_{action}_{sensitive}")
    words = ["The", "quick", "AND", "and", "Brown", "fox", "the"]
    (got,) = run_onyx(path, {"x": strings(*words).reshape(1, 7)})
    assert got.tolist() == [normalize_reference(words, action, sensitive, stopwords)]


def test_string_normalizer_all_removed():
    node = helper.make_node("StringNormalizer", ["x"], ["y"], stopwords=["a"])
    path = model(node, [helper.make_tensor_value_info("x", S, [2])], [helper.make_tensor_value_info("y", S, None)],
                 10, "strnorm_all_removed")
    (got,) = run_onyx(path, {"x": strings("A", "a")})
    assert got.tolist() == [""]


def test_string_normalizer_utf8_case():
    # Expected values from Python's str.upper/lower (simple mappings of these letters).
    words = ["Straße", "éCOLE", "Ωμέγα", "Привет", "ĳssel", "naïve"]
    for action, fn in [("UPPER", str.upper), ("LOWER", str.lower)]:
        node = helper.make_node("StringNormalizer", ["x"], ["y"], case_change_action=action)
        path = model(node, [helper.make_tensor_value_info("x", S, [len(words)])],
                     [helper.make_tensor_value_info("y", S, None)], 10, f"strnorm_utf8_{action}")
        (got,) = run_onyx(path, {"x": strings(*words)})
        want = [w if w == "Straße" and action == "UPPER" else fn(w) for w in words]
        want = ["STRAßE" if w == "Straße" and action == "UPPER" else x for w, x in zip(words, want)]
        assert got.tolist() == want


def test_string_concat_broadcast():
    node = helper.make_node("StringConcat", ["a", "b"], ["c"])
    path = model(node, [helper.make_tensor_value_info("a", S, [2, 1]), helper.make_tensor_value_info("b", S, [3])],
                 [helper.make_tensor_value_info("c", S, None)], 20, "string_concat_bcast")
    feeds = {"a": strings("x", "ü").reshape(2, 1), "b": strings("", "1", "€")}
    assert run_onyx(path, feeds)[0].tolist() == run_ort(path, feeds)[0].tolist()


@pytest.mark.parametrize("mode", ["TF", "IDF", "TFIDF"])
@pytest.mark.parametrize("weighted", [False, True])
def test_tfidf_int_pool(mode, weighted):
    attrs = dict(mode=mode, min_gram_length=1, max_gram_length=3, max_skip_count=2,
                 ngram_counts=[0, 4, 8], ngram_indexes=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
                 pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3, 5, 4])
    if weighted:
        attrs["weights"] = [0.5, 1.5, 2.0, 0.25, 1.0, 3.0, 0.1, 0.2, 0.3, 0.4]
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], **attrs)
    path = model(node, [helper.make_tensor_value_info("x", TensorProto.INT32, [2, 12])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], 9, f"tfidf_{mode}_{weighted}")
    rng = np.random.default_rng(3)
    feeds = {"x": rng.integers(2, 9, (2, 12)).astype(np.int32)}
    assert_outputs_close(run_ort(path, feeds), run_onyx(path, feeds))


def tfidf_tf_reference(row, pool, min_n, max_n, max_skip):
    """TF counts of `pool` (n-gram tuple -> output index) in `row`, with unigrams counted once."""
    counts = {}
    for n in range(min_n, max_n + 1):
        for skip in range(0, max_skip + 1 if n > 1 else 1):
            for start in range(len(row)):
                idx = [start + k * (skip + 1) for k in range(n)]
                if idx[-1] >= len(row):
                    break
                gram = tuple(row[i] for i in idx)
                if gram in pool:
                    counts[pool[gram]] = counts.get(pool[gram], 0) + 1
    return counts


def test_tfidf_string_pool():
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode="TF", min_gram_length=1, max_gram_length=2,
                            max_skip_count=1, ngram_counts=[0, 2], ngram_indexes=[3, 0, 1, 2, 4],
                            pool_strings=["a", "c", "a", "b", "a", "c", "b", "c"])
    path = model(node, [helper.make_tensor_value_info("x", S, [7])],
                 [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], 9, "tfidf_strings")
    row = ["a", "b", "c", "a", "x", "c", "b"]
    (got,) = run_onyx(path, {"x": strings(*row)})
    pool = {("a",): 3, ("c",): 0, ("a", "b"): 1, ("a", "c"): 2, ("b", "c"): 4}
    want = np.zeros(5, np.float32)
    for index, count in tfidf_tf_reference(row, pool, 1, 2, 1).items():
        want[index] = count
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("min_n", [1, 2])
def test_tfidf_huge_max_skip_count_counts_what_fits_at_once(min_n):
    """max_skip_count 2^62 counts exactly what max_skip_count = row length counts, at once: the
    skips past the row were looped over one by one (a fuzzed model kept a session busy for over
    a minute; tests/fuzz/regressions/session/tfidf_huge_max_skip_count.onnx)."""
    import time
    pool = [2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3, 5, 4]
    results, paths = [], []
    for skip in (12, 2**62):
        node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], mode="TF", min_gram_length=min_n, max_gram_length=3,
                                max_skip_count=skip, ngram_counts=[0, 4, 8],
                                ngram_indexes=list(range(10)), pool_int64s=pool)
        path = model(node, [helper.make_tensor_value_info("x", TensorProto.INT32, [2, 12])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], 9, f"tfidf_skip_{skip}_{min_n}")
        paths.append(path)
        feeds = {"x": np.random.default_rng(4).integers(2, 9, (2, 12)).astype(np.int32)}
        start = time.monotonic()
        results.append(run_onyx(path, feeds)[0])
        assert time.monotonic() - start < 10
    np.testing.assert_array_equal(results[0], results[1])
    assert_outputs_close(run_ort(paths[0], feeds), [results[0]])
