"""Presentation: derived algorithms and strips as pictures and documents.

* :func:`flamefuse.present.svg.strips_svg` -- one fused solution's strips as SVG
* :func:`flamefuse.present.svg.conflict_svg` -- the conflicting regions when none exists
* :func:`flamefuse.present.latex.latex_document` -- a compilable LaTeX document of the fused
  algorithms in the classic FLAME layout
"""
