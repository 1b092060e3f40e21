"""Sphinx configuration of the alloc_framework release notes."""

project = 'alloc_framework release notes'
copyright = 'alloc_framework developers'
extensions = ['reno.sphinxext']
master_doc = 'index'
html_theme = 'alabaster'
