"""Helpers the tests import: functions, classes and constants, a module per domain.

Fixtures stay in conftest.py files, where pytest finds them; a fixture may call these helpers."""
