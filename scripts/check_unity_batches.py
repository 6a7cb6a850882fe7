#!/usr/bin/env python3
"""Checks a unity build's batches (CMAKE_UNITY_BUILD: CMake's Unity/unity_*.cxx files) for
clashes between the files each batch concatenates into one translation unit.

Two files' file-local helpers (anonymous namespace, `static`) of the same name either fail to
compile together or, worse, compile into overloads where one file's call silently picks the
other file's function. A macro or a `using namespace` of one file also reaches every file after
it in its batch. This script lists, per batch:
  - every name that two files of the batch declare at namespace scope (functions, variables,
    types, aliases), whatever their signatures;
  - every project header that only an earlier file includes whose namespace-scope names meet
    a later file's own (the later file's helper then overloads the header's function);
  - every macro a file defines (and does not #undef) that a later file of the batch spells;
  - every `using namespace` that reaches a later file which lacks it and spells a name the
    project's headers declare in that namespace.
Such files get SKIP_UNITY_BUILD_INCLUSION (cmake/onyx_unity.cmake) or a rename. Exit status 1
when anything is listed. Needs Universal Ctags (`ctags`) for the declarations.

Usage: check_unity_batches.py BUILD_DIR
"""
import collections
import functools
import json
import pathlib
import re
import subprocess
import sys

INCLUDE = re.compile(r'^#include "(.+)"$', re.M)
QUOTED_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
INCLUDE_ROOTS = ("src", "include", "tools", "tests/unit", "tests/soak", "tests/fuzz")
ANON = re.compile(r"__anon\w+")
USING_NAMESPACE = re.compile(r"^\s*using\s+namespace\s+([\w:]+)\s*;", re.M)
UNDEF = re.compile(r"^\s*#\s*undef\s+(\w+)", re.M)
IDENT = re.compile(r"\b[A-Za-z_]\w*\b")
# gtest's macros, which ctags reads as functions; a clash among the classes they make is a
# compile error, not a silent one.
GTEST_MACROS = {"TEST", "TEST_F", "TEST_P", "TYPED_TEST", "TYPED_TEST_P", "INSTANTIATE_TEST_SUITE_P",
                "TYPED_TEST_SUITE", "REGISTER_TYPED_TEST_SUITE_P", "INSTANTIATE_TYPED_TEST_SUITE_P"}


def batches(build_dir):
    for unity in sorted(pathlib.Path(build_dir).rglob("Unity/unity_*.cxx")):
        files = INCLUDE.findall(unity.read_text())
        if len(files) > 1:
            yield unity, files


def ctags(paths):
    out = subprocess.run(["ctags", "--output-format=json", "--fields=+KZs", "--c++-kinds=+zp",
                          "--extras=-q", "--language-force=C++", "-f", "-", *paths],
                         check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        tag = json.loads(line)
        if tag.get("_type") == "tag" and tag["kind"] not in ("namespace", "parameter"):
            yield tag


@functools.lru_cache(maxsize=None)
def namespace_scope_tags(path):
    """(kind, scope, name) of what the file declares outside any class or function."""
    return [(t["kind"], ANON.sub("<anonymous>", t.get("scope", "")), t["name"]) for t in ctags([path])
            if (t["kind"] == "macro" or t.get("scopeKind", "namespace") == "namespace")
            and t["name"] not in GTEST_MACROS]


@functools.lru_cache(maxsize=None)
def header_namespace_members(root):
    """namespace name -> the names the project's headers declare directly in it."""
    headers = [str(h) for d in ("src", "include", "tools", "tests") for h in pathlib.Path(root, d).rglob("*.h")]
    members = collections.defaultdict(set)
    for t in ctags(headers):
        if t.get("scopeKind") == "namespace":
            members[t["scope"].split("::")[-1]].add(t["name"])
    return members


@functools.lru_cache(maxsize=None)
def text(path):
    return pathlib.Path(path).read_text(errors="replace")


def project_headers(path, root, seen=None):
    """The project headers a file includes, directly or through other project headers."""
    seen = set() if seen is None else seen
    for name in QUOTED_INCLUDE.findall(text(path)):
        for base in (pathlib.Path(path).parent, *(pathlib.Path(root, r) for r in INCLUDE_ROOTS)):
            header = (base / name).resolve()
            if header.is_file():
                if str(header) not in seen:
                    seen.add(str(header))
                    project_headers(str(header), root, seen)
                break
    return seen


@functools.lru_cache(maxsize=None)
def headers_of(path, root):
    return frozenset(project_headers(path, root))


def check_batch(files, root):
    """[(problem, file)]: file is the later file of the pair, the one to compile alone."""
    problems = []
    declared = collections.defaultdict(list)  # name -> [(file, kind, scope)] in batch order
    macros = {}
    for f in files:
        for kind, scope, name in namespace_scope_tags(f):
            if kind == "macro":
                macros.setdefault(f, set()).add(name)
            else:
                declared[name].append((f, kind, scope))
    for name, where in sorted(declared.items()):
        owners = list(dict.fromkeys(f for f, _, _ in where))
        if len(owners) > 1 and not one_external_entity(where):
            listed = "; ".join(f"{short(f)} ({kind} in {scope or '::'})" for f, kind, scope in where)
            problems += [(f"name {name}: {listed}", f) for f in owners[1:]]
    # A header that only an earlier file includes: its names meet the later file's own.
    for i, later in enumerate(files):
        own = {name for kind, _, name in namespace_scope_tags(later) if kind != "macro"}
        mine = headers_of(later, root)
        for f in files[:i]:
            for header in sorted(headers_of(f, root) - mine):
                met = own & {name for _, _, name in namespace_scope_tags(header)}
                if met:
                    problems.append((f"names {sorted(met)} of {short(later)} meet {short(header)}, "
                                     f"which {short(f)} includes", later))
    for i, f in enumerate(files):
        leaking = macros.get(f, set()) - set(UNDEF.findall(text(f)))
        for later in files[i + 1:]:
            spelled = set(IDENT.findall(text(later))) & leaking
            if spelled:
                problems.append((f"macros {sorted(spelled)} of {short(f)} reach {short(later)}", later))
        for ns in set(USING_NAMESPACE.findall(text(f))):
            if ns.endswith("_literals"):
                continue  # only literal operators, which no other file can name without it
            members = header_namespace_members(root)[ns.split("::")[-1]]
            for later in files[i + 1:]:
                if ns in USING_NAMESPACE.findall(text(later)):
                    continue
                spelled = set(IDENT.findall(text(later))) & members
                if spelled:
                    problems.append((f"`using namespace {ns}` of {short(f)} reaches {short(later)}, "
                                     f"which spells its names {sorted(spelled)[:6]}", later))
    return problems


def one_external_entity(where):
    """Declarations of one function outside any anonymous namespace, defined at most once
    (replay_main.cc declares the fuzz entry point its harness defines): one entity, no clash."""
    external = all("<anonymous>" not in scope for _, _, scope in where)
    return external and sum(kind != "prototype" for _, kind, _ in where) <= 1


def short(path):
    return pathlib.Path(path).name


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    found = 0
    count = 0
    root = pathlib.Path(__file__).resolve().parent.parent
    for unity, files in batches(sys.argv[1]):
        count += 1
        for problem, _ in check_batch(files, root):
            print(f"{unity.relative_to(sys.argv[1])}: {problem}")
            found += 1
    if count == 0:
        sys.exit(f"no unity batches under {sys.argv[1]}: configure with -DCMAKE_UNITY_BUILD=ON")
    print(f"{count} unity batches, {found} clashes")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
