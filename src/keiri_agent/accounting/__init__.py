"""Japanese accounting domain logic (issue 32): 入金消込 and what it needs."""
