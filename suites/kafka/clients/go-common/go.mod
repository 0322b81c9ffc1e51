module wirecheck/suites/kafka/clients/go-common

go 1.26.0
