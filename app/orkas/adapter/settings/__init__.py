"""What the install keeps: settings, preferences, permission rules, the vault, usage, devices, the data format."""
