"""Benchmarks of the codecs themselves, no network: HG-Sketch encode/decode (``codec``,
``codec_compare``) and HG-Sketch against the baselines of ``bench/baselines`` on real gradients
(``compare``, ``gradients``, ``plots``)."""
