"""Vue and Svelte single-file components: the script's definitions, the markup's blocks."""

from __future__ import annotations

import textwrap

import pytest

from tests.index.test_chunk_properties import assert_invariants
from vq.core.filetypes import handler_name, language_for
from vq.indexer.handlers import Limits
from vq.indexer.handlers.code import code_handler

TOGGLE = textwrap.dedent("""\
    <script setup lang="ts">
    import { computed } from 'vue'

    const props = defineProps<{ open: boolean }>()

    const label = computed(() => props.open ? 'Close' : 'Open')

    function toggle(): void {
      emit('toggle')
    }
    </script>

    <template>
      <button class="toggle" @click="toggle">{{ label }}</button>
    </template>

    <style scoped>
    .toggle { color: var(--vp-c-brand); }
    </style>
    """)
SMALL = Limits(max_chars=120, min_chars=10)  # no merging: each block stands alone


def rows(text: str, path: str, limits: Limits = SMALL) -> list[tuple[int, int, str, str]]:
    document = code_handler(text, path, limits)
    assert_invariants(text, document)
    return [(c.start_line, c.end_line, c.symbol, c.symbol_kind) for c in document.chunks]


def test_component_files_are_code_of_their_own_language() -> None:
    assert (handler_name("src/Toggle.vue"), language_for("src/Toggle.vue")) == ("code", "vue")
    assert language_for("routes/+page.svelte") == "svelte"


def test_a_vue_script_is_parsed_as_typescript_and_the_markup_kept_in_blocks() -> None:
    """Before, a ``.vue`` file was not indexed at all; now ``computed`` and ``function``
    definitions have exact lines, and the template and style are blocks of their own."""
    assert rows(TOGGLE, "Toggle.vue") == [
        (1, 4, "", ""),  # the opening tag and imports
        (6, 6, "label", "function"),  # computed(() => ...) is seen through the call
        (8, 11, "toggle", "function"),  # the closing tag joins the script's last block
        (13, 15, "", ""),
        (17, 19, "", ""),
    ]
    document = code_handler(TOGGLE, "Toggle.vue", SMALL)
    assert document.language == "vue"
    assert document.chunks[2].context == "function toggle: function toggle(): void"


OPTIONS = textwrap.dedent("""\
    <template>
      <div>{{ total }}</div>
    </template>

    <script>
    export default {
      name: 'Cart',
      data() {
        return { open: false }
      },
      computed: {
        total() {
          return this.items.reduce((sum, item) => sum + item.price, 0)
        }
      },
      methods: {
        /** Empty the cart and tell the parent. */
        clear() {
          this.$emit('clear')
        }
      }
    }
    </script>
    """)


def test_a_vue_options_object_has_its_methods_and_options_as_definitions() -> None:
    """Vue 2's options API (and ``defineComponent({...})``): the whole script was one
    block; now ``data``, each computed property and each method is a definition, and a
    group's opening line (``computed: {``) joins the first definition in it."""
    assert rows(OPTIONS, "ShoppingCart.vue", Limits()) == [
        (1, 7, "", ""), (8, 10, "Cart.data", "method"), (11, 14, "Cart.total", "method"),
        (15, 23, "Cart.clear", "method")]  # "}," and "methods: {" open clear's group
    wrapped = OPTIONS.replace("export default {", "export default defineComponent({")
    wrapped = wrapped.replace("}\n</script>", "})\n</script>")
    assert [r[2] for r in rows(wrapped, "Cart.vue", Limits())] == [
        "", "Cart.data", "Cart.total", "Cart.clear"]
    # no `name:` option: the file's stem names the component (as Vue does); a `name:`
    # deeper in the object (a data field) names nothing
    unnamed = OPTIONS.replace("  name: 'Cart',\n", "").replace(
        "{ open: false }", "{\n      name: 'guest'\n    }")
    assert [r[2] for r in rows(unnamed, "MiniCart.vue", Limits())] == [
        "", "MiniCart.data", "MiniCart.total", "MiniCart.clear"]
    assert [r[2] for r in rows(TOGGLE, "Toggle.vue", SMALL)][:3] == ["", "label", "toggle"]


def test_a_svelte_script_without_lang_is_javascript_and_its_markup_follows() -> None:
    text = textwrap.dedent("""\
        <script>
        \texport let data;

        \tfunction follow(username) {
        \t\treturn fetch(`/profile/${username}/follow`, { method: 'POST' });
        \t}
        </script>

        <svelte:head><title>Profile</title></svelte:head>

        <div class="profile-page">
        \t<button on:click={() => follow(data.profile.username)}>Follow</button>
        </div>
        """)
    assert rows(text, "routes/profile/+page.svelte") == [
        (1, 2, "", ""), (4, 7, "follow", "function"), (9, 9, "", ""), (11, 13, "", "")]


def test_astro_frontmatter_and_scripts_are_typescript() -> None:
    text = textwrap.dedent("""\
        ---
        import Icon from './Icon.astro';

        function label(count: number): string {
          return `${count} results`;
        }
        ---

        <site-search>
          <button data-open-modal><Icon name="magnifier" /></button>
        </site-search>

        <script>
          class SiteSearch extends HTMLElement {
            open(): void { this.dialog.showModal(); }
          }
        </script>
        """)
    assert rows(text, "components/Search.astro", Limits()) == [
        (1, 2, "", ""), (4, 7, "label", "function"), (9, 13, "", ""),
        (14, 17, "SiteSearch", "class")]  # the <script> tag ends the markup above


@pytest.mark.parametrize("text", [
    "<template><p>one line</p></template>\n",  # no script at all
    "<script>export default {}</script>\n<template>\n  <p/>\n</template>\n",  # one-line script
    "<script>\nconst a = (\n</script>\n<template>\n<p/>\n</template>\n",  # a script it cannot read
    "<script setup>\nfunction f() {}\n",  # never closed
    "",
])
def test_odd_components_keep_every_line_in_symbol_less_blocks(text: str) -> None:
    got = rows(text, "Odd.vue")
    assert all(symbol == "" for _, _, symbol, _ in got)


@pytest.mark.model
def test_a_component_function_is_found_by_what_it_does(tmp_path, build, cli) -> None:
    """The real model and store: a question about what a component's script does lands
    on that function, with its lines; a question about what it shows, on its markup."""
    from tests.conftest import build_and_search

    other = ("<template>\n  <time>{{ stamp }}</time>\n</template>\n\n"
             "<script setup>\nfunction formatDate(d) {\n  return d.toISOString()\n}\n</script>\n")
    hits = build_and_search(tmp_path, build, cli, {"Toggle.vue": TOGGLE, "Other.vue": other},
                            "code", "format a date as an ISO string", "-n", "3")
    assert (hits[0]["path"], hits[0].get("symbol"), hits[0]["start_line"]) == \
        ("Other.vue", "formatDate", 6)  # the <script> tag ends the template's block
    assert hits[0]["language"] == "vue"
