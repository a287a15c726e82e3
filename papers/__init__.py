"""Reproductions of published AD results, each checked by a test."""
