"""Sphinx configuration of the alloc_framework documentation."""

project = 'alloc_framework'
copyright = 'alloc_framework developers'
extensions = [
    'oslo_config.sphinxext',
    'oslo_policy.sphinxext',
]
master_doc = 'index'
exclude_patterns = ['_build']
html_theme = 'alabaster'
