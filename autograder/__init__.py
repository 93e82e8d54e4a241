"""Grading configuration and tools for the course (nbgrader-based)."""
