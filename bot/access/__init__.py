"""Who may ask, approve and run as whom: approvers, identities, channels, clearance."""
