"""Compatibility presets: keys that reproduce another library's canonical form.

Reserved for the compat presets (``urikey.compat.w3lib.canonicalize_url``,
``urikey.compat.surt.surt`` and ``compat="w3lib"`` on the keying calls),
which the library provides through its keying configuration. Nothing is
implemented here yet.
"""
