"""p4c's warnings for accepted programs, from the program as written: shadowing, unused
declarations, unreachable ``accept``, uninitialised reads, invalid headers, overlapping ``out``
arguments, deprecated calls, and the warnings the checks collect (``collect.py``)."""
