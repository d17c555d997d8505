package mcpexpose

// FastServed returns how many requests h answered on its fast path.
func FastServed(h *Handler) int64 { return h.fastServed.Load() }
