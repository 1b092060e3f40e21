"""Version information for alloc_framework."""

import pbr.version

version_info = pbr.version.VersionInfo('alloc_framework')
