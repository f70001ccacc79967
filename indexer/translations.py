"""Translated docs trees, and which of their languages the embedding model reads.

Many projects keep their docs in several languages side by side: a folder per
language code (``docs/en/``, ``docs/es/``; the MkDocs i18n plugin's *folder*
layout), a Docusaurus ``i18n/<lang>/`` tree, or a suffix per page
(``index.fr.md``; the MkDocs i18n plugin's *suffix* layout). An English-only
model embeds the other languages as noise, at the same cost per chunk, so
`vq init` proposes only the languages the model reads and says what it left out.

A folder is a language folder when its name is an ISO 639-1 code (with an
optional region or script: ``pt-BR``, ``zh_CN``, ``zh-hant``) and it sits beside
at least one other language folder that holds pages, or under a folder named
for translations (``i18n``, ``locales``, ``lang``, ...), and language folders are at
least half of the folders there that hold pages (``modules/lang/hy/`` among 60
programming-language modules is Hy, not Armenian). Two-letter names that are also
common folder names (``js``, ``ts``, ``go``...) are not codes here, and one lone
``de/`` beside ``src/`` is never taken for a translation; a lone folder whose name
carries a region or script as people write them (``zh-CN``, ``pt-BR``, ``zh-Hant``:
commander.js keeps its Chinese pages in ``docs/zh-CN/`` beside English ones in
``docs/``) is one, as is a page named so (``Readme_zh-CN.md``, ``README-pt-BR.md``).

Which languages a model reads comes from its name: vq cannot ask a model which
languages it was trained on, so a name containing ``multilingual``, ``labse``,
``xlm``, ``m3``, ``me5`` or ``distiluse`` reads every language; any other model
is taken to read English. The rule is documented in docs/init-doctor.md.

tldr keeps each language as a folder beside the English one, ``pages.fr/`` beside
``pages/``: a folder named ``<folder>.<code>`` beside ``<folder>`` is a language
folder too. Its English pages are named for commands, and ``git-rm.md``,
``docker-ps.md`` and ``git-am.md`` end in codes (Romansh, Pashto, Amharic): a page
named by a bare code counts only when its first words do not read as English, and so
does a page named ``<name>.<code>.md`` (Dendron's ``publish.config.ga.md``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from vq.core.filetypes import PROSE_EXTENSIONS

# ISO 639-1, less codes that are far more often a folder's own name in a repository
# (ts: TypeScript, ml: machine learning; js and go are no codes at all).
LANGUAGE_CODES = frozenset("""
af am ar as az be bg bn bo br bs ca cs cy da de el en eo es et eu fa fi fo fr fy ga gd gl
gu ha he hi hr hu hy ia id ig is it ja jv ka kk km kn ko ku ky la lb lo lt lv mg mi mk mn mr
ms mt my nb ne nl nn no oc or pa pl ps pt qu rm ro ru rw sa sd si sk sl so sq sr su sv sw
ta te tg th tk tl tr tt ug uk ur uz vi wo xh yi yo zh zu
""".split())
FOLDER_NAMES_TOO = frozenset({"ml", "ts"})  # the codes left out above: pages.ml is Malayalam
TRANSLATION_PARENTS = frozenset({"i18n", "l10n", "locale", "locales", "translations",
                                 "lang", "langs", "languages"})
MULTILINGUAL_HINTS = ("multilingual", "labse", "xlm", "m3", "me5", "distiluse")
ENGLISH = frozenset({"en"})
_CODE = re.compile(r"^([a-z]{2})(?:[-_](?:[a-z]{2}|[a-z]{4}))?$")
_PAGE = f"({'|'.join(sorted(e[1:] for e in PROSE_EXTENSIONS))})"  # md|adoc|org|...
_SUFFIXED = re.compile(rf"\.([a-z]{{2}}(?:[-_](?:[a-z]{{2}}|[a-z]{{4}}))?)\.{_PAGE}$")
_REGION = r"[a-z]{2}[-_](?:[A-Z]{2}|[A-Z][a-z]{3})"  # zh-CN, pt_BR, zh-Hant: case as written
_REGION_FOLDER = re.compile(rf"^{_REGION}$")
_REGION_SUFFIXED = re.compile(rf"([_-])({_REGION})\.{_PAGE}$")
# README-fr.adoc, attributes-de.adoc, README_ZH.md: a page named for a language by a bare
# code after a hyphen or underscore, counted only when the same page exists in two
# languages, or (a code in capitals) beside its original (see _siblings)
_CODE_SUFFIXED = re.compile(rf"^(.+?)([_-])([a-z]{{2}}(?:_[A-Z]{{2}})?|[A-Z]{{2}})\.{_PAGE}$")
# README_CN.md, README_JP.md: countries written for their language, as many projects do
COUNTRY_AS_LANGUAGE = {"cn": "zh", "tw": "zh", "hk": "zh", "jp": "ja", "kr": "ko"}
# English function words, which other languages' text has next to none of: "to" is
# Polish, "is" Dutch, "for" and "have" Danish and Norwegian, so they are not here.
ENGLISH_WORDS = frozenset("the and of with that this are from you your which when what how "
                          "should has".split())
ENGLISH_SHARE = 0.02  # English pages: 2.4% and up over 5 tldr pages; its translations ~0
ENGLISH_SAMPLE = 5    # pages read per language
_WORDS = re.compile(r"[^\W\d_]{1,40}")


def model_languages(model: str) -> frozenset[str] | None:
    """The languages ``model`` reads: None for every language (a multilingual model)."""
    name = model.lower()
    return None if any(hint in name for hint in MULTILINGUAL_HINTS) else ENGLISH


def language_of(name: str) -> str | None:
    """``"pt-BR"`` -> ``"pt"``; None when the name is not a language code."""
    match = _CODE.match(name.lower())
    return match.group(1) if match and match.group(1) in LANGUAGE_CODES else None


@dataclass(frozen=True)
class Translations:
    """One translated tree: ``left_out`` holds folders (``docs/es``) or globs (``*.fr.md``)."""

    where: str                     # the folder holding the language folders ("" = root)
    files: dict[str, int]          # language folder or suffix glob -> Markdown files
    left_out: tuple[str, ...]

    @property
    def left_out_files(self) -> int:
        return sum(self.files[k] for k in self.left_out)


def find_translations(pages: Iterable[str], model: str,
                      read: Callable[[str], str] | None = None) -> list[Translations]:
    """The translated trees among ``pages`` (prose pages' paths relative to the project
    root), with the languages ``model`` does not read left out. ``read`` gives a page's
    first words: a page named ``<name>-<code>`` that reads as English is no translation
    (tldr's ``git-rm.md`` and ``docker-ps.md``: Romansh and Pashto by their names)."""
    pages = list(pages)
    reads = model_languages(model)
    found = _folder_trees(pages, reads)
    languages = tuple(f + "/" for tree in found for f in tree.files)
    globs, codes = _named_pages([p for p in pages if not p.startswith(languages)], read)
    if globs:
        found.append(Translations("", globs, tuple(
            g for g in globs if not _reads(reads, codes[g]))))
    return found


def _folder_trees(pages: list[str], reads: frozenset[str] | None) -> list[Translations]:
    """The trees of language folders (``docs/fr/``, ``i18n/de/``, ``pages.fr/``)."""
    folders: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    dirs = {folder for p in pages for folder in folders_of(p)}
    for path in pages:
        parts = path.split("/")
        for i, part in enumerate(parts[:-1]):
            if language_of(part) or _dotted(part, "/".join(parts[:i]), dirs):
                folders["/".join(parts[:i])][part] += 1
                break
    return [_tree(where, dict(langs), reads) for where, langs in sorted(folders.items())
            if any(_REGION_FOLDER.match(name) for name in langs)
            or ((len(langs) >= 2 or where.rsplit("/", 1)[-1].lower() in TRANSLATION_PARENTS)
                and 2 * len(langs) >= len(_children(pages, where)))]


def _named_pages(pages: list[str], read: Callable[[str], str] | None
                 ) -> tuple[dict[str, int], dict[str, str]]:
    """(glob -> pages, glob -> language) for pages named for their language, ``faq.fr.md``
    and ``README-fr.md``, unless ``read`` finds them English: Dendron names its notes by
    hierarchy, and ``publish.config.ga.md`` (Google Analytics) and ``giscus.id.md`` end in
    Irish and Indonesian by their names."""
    codes: dict[str, str] = {}
    named: dict[str, list[str]] = defaultdict(list)
    for path in pages:
        glob, code = _suffix(path.rsplit("/", 1)[-1])
        if glob:
            named[glob].append(path)
            codes[glob] = code
    for glob, code, path in _siblings(pages):
        named[glob].append(path)
        codes[glob] = code
    counts = {glob: len(paths) for glob, paths in named.items()
              if read is None or not _english(read, paths)}
    return dict(sorted(counts.items())), codes


def folders_of(path: str) -> list[str]:
    """``a/b/c.md`` -> ``["a", "a/b"]``: the folders holding it, outermost first."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _dotted(name: str, parent: str, dirs: set[str]) -> str | None:
    """The language of a folder named ``<folder>.<code>`` beside ``<folder>`` (tldr keeps
    ``pages.fr/`` and 40 more beside ``pages/``), else None."""
    stem, dot, code = name.rpartition(".")
    sibling = f"{parent}/{stem}" if parent else stem
    if not (dot and stem and sibling in dirs):
        return None
    return language_of(code) or (code if code in FOLDER_NAMES_TOO else None)


def _english(read: Callable[[str], str], paths: list[str]) -> bool:
    """The first words of up to ``ENGLISH_SAMPLE`` of ``paths`` read as English: at least
    ``ENGLISH_SHARE`` of them are English function words, which other languages' text
    (tldr's 40 translations, Latin script or not) has next to none of."""
    words = [w for p in paths[:ENGLISH_SAMPLE] for w in _WORDS.findall(read(p).lower())]
    return bool(words) and sum(w in ENGLISH_WORDS for w in words) >= ENGLISH_SHARE * len(words)


def _suffix(name: str) -> tuple[str, str]:
    """(glob, language code) for a page named for its language (``faq.fr.md``,
    ``Readme_zh-CN.md``), else ("", "")."""
    match = _SUFFIXED.search(name.lower())
    if match and language_of(match.group(1)):
        return f"*.{match.group(1)}.{match.group(2)}", match.group(1)
    match = _REGION_SUFFIXED.search(name)
    if match and language_of(match.group(2)):
        return f"*{match.group(1)}{match.group(2)}.{match.group(3)}", match.group(2)
    return "", ""


def _children(pages: list[str], where: str) -> set[str]:
    """The folders directly in ``where`` that hold pages: in a translated tree, most are
    languages (Doom Emacs' ``modules/lang/`` holds 60 programming languages, one of
    them ``hy``, which is also Armenian's code)."""
    base = f"{where}/" if where else ""
    return {p[len(base):].split("/", 1)[0] for p in pages
            if p.startswith(base) and "/" in p[len(base):]}


def _siblings(pages: list[str]) -> list[tuple[str, str, str]]:
    """(glob, language, path) per page named ``<stem>-<code>.<ext>`` (or ``_``) whose stem has
    that form in at least two languages in its folder: ``README-fr.adoc`` beside
    ``README-de.adoc``. One such page alone (``intro-to.md``, ``what-is.md``) is a name,
    not a language, unless its code is in capitals and its original is beside it
    (``README_CN.md`` beside ``README.md``). Pages ``_suffix`` already read are left to it."""
    groups: dict[tuple[str, str, str, str], dict[str, str]] = defaultdict(dict)
    originals: set[tuple[str, str, str, str]] = set()
    present = {p.lower() for p in pages}
    for path in pages:
        folder, _, name = path.rpartition("/")
        match = _CODE_SUFFIXED.match(name)
        if match and not _suffix(name)[0] and _bare_language(match.group(3)):
            stem, sep, code, ext = match.groups()
            key = (folder, stem.lower(), sep, ext)
            groups[key][code] = path
            original = f"{folder}/{stem}.{ext}" if folder else f"{stem}.{ext}"
            if code.isupper() and original.lower() in present:
                originals.add(key)
    out = []
    for key, found in sorted(groups.items()):
        if len(found) >= 2 or key in originals:
            _, _, sep, ext = key
            out += [(f"*{sep}{code}.{ext}", _bare_language(code) or code, found[code])
                    for code in sorted(found)]
    return out


def _bare_language(code: str) -> str | None:
    """The language of a page's bare code: ``fr``, ``pt_BR``; in capitals also a country
    many projects write for its language (``CN`` for Chinese)."""
    if code.isupper():
        code = COUNTRY_AS_LANGUAGE.get(code.lower(), code.lower())
    return language_of(code)


def _tree(where: str, langs: dict[str, int], reads: frozenset[str] | None) -> Translations:
    files = {(f"{where}/{name}" if where else name): n for name, n in langs.items()}
    left = tuple(sorted(f for f in files
                        if not _reads(reads, f.rsplit("/", 1)[-1].rpartition(".")[2])))
    return Translations(where, files, left)


def _reads(reads: frozenset[str] | None, code: str) -> bool:
    return reads is None or language_of(code) in reads
