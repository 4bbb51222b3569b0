"""People, roles and the audit trail (issue 33): who may do what, and a record of who did."""
