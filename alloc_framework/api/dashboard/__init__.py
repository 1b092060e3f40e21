"""The read-only web dashboard of the Placement API process."""
