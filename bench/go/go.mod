module teleprompt.bench/gotemplate

go 1.19
