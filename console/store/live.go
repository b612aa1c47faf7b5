package store

// liveMigrations are this area's tables.
func liveMigrations() []Migration { return nil }
