"""The declared cases of the shipped vectors (``cases/<algorithm>.py``), the generator that
writes ``vectors/`` from them by running the reference, and the spec's figures drawn from them.

``vectors/`` holds only the vectors themselves (JSON and a format README per family).
"""
