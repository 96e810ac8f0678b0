"""Perception: what a tool call's result says, read once, before any sense feels.

This package is where reading tool output is meant to live (issue 23); this round it holds
the reading that needs no vocabulary at all, `novelty`: what a result brought that the
session had not already shown, and whether the call met an obstacle.
"""
