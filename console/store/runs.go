package store

// runMigrations are this area's tables.
func runMigrations() []Migration { return nil }
