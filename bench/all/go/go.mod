module teleprompt.bench/all

go 1.19
