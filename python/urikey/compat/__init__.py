"""Drop-in replacements for other libraries' canonicalizers, byte for byte.

``urikey.compat.w3lib.canonicalize_url`` reproduces w3lib 2.5.0 and
``urikey.compat.surt.surt`` reproduces surt 0.3.1 (the Internet Archive's CDX
keys), quirks included, through urikey's compatibility presets
(``compat="w3lib"``, ``"w3lib-keep-fragments"``, ``"ia-surt"`` on every keying
call). Arguments the presets do not cover raise ``NotImplementedError`` naming
them. See ``docs/compat.md`` for every reproduced quirk.
"""

from urikey.compat import surt, w3lib

__all__ = ["surt", "w3lib"]
