module skyjobot

go 1.19
