package health

// AsNobody is asNobody, for the end-to-end tests in package health_test.
var AsNobody = asNobody
