"""Test helpers that run real parts on loopback (stand-in servers, fixtures)."""
