"""Model providers: adding and listing them, their catalogue, key pools, local servers."""
