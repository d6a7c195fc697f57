"""Drop-in replacements for other libraries' canonicalizers, byte for byte.

``urikey.compat.w3lib.canonicalize_url`` reproduces w3lib 2.5.0 and
``urikey.compat.surt.surt`` reproduces surt 0.3.1 (the Internet Archive's CDX
keys), quirks included, through urikey's compatibility presets
(``compat="w3lib"``, ``"w3lib-keep-fragments"``, ``"ia-surt"`` on every keying
call). They take what the originals take (``str``, ``bytes``, w3lib's
``ParseResult`` and surt's ``None``, every argument at its default, w3lib's
``keep_blank_values``, ``encoding`` and ``query_separator``, surt's
``reverse_ipaddr``) and raise where the originals raise, with exceptions the
originals' ``except`` clauses catch. The few arguments they do not reproduce
raise ``NotImplementedError`` naming them: surt's other options away from their
defaults and custom canonicalizers, and w3lib separators other than
``& ; , ! $ ( ) *``. See ``docs/compat.md`` for every reproduced quirk, and
``scripts/upstream-tests`` for w3lib's, surt's and Scrapy's own test suites run
against them.
"""

from urikey.compat import surt, w3lib

__all__ = ["surt", "w3lib"]
