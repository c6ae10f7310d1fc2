"""Loaded automatically by Python in test subprocesses (PYTHONPATH points here)."""

import netguard

netguard.install()
