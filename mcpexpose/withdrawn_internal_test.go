package mcpexpose

// toolOptionsShape is ToolOptions written without field names: it stops
// compiling when a field is added, removed or reordered, so that no option
// joins ToolOptions without someone deciding, here, that it cannot hide a
// tool that runs (TestNoToolOptionHidesARunnableTool tries every value of
// every field). A name that answers without running goes through
// Exposure.Withdrawn, which takes no function.
var _ = ToolOptions{
	"",        // Name
	TaskNever, // Task
	false,     // TaskAfterQuestions
	nil,       // UI: a view changes what a tool shows, never whether it is listed
}
