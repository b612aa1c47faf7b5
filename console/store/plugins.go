package store

// pluginMigrations are this area's tables.
func pluginMigrations() []Migration { return nil }
