package store

// harnessMigrations are this area's tables.
func harnessMigrations() []Migration { return nil }
