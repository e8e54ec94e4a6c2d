"""Presentation helpers shared by every command that prints (plain text; imports nothing heavy)."""
