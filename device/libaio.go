package device

import "errors"

func openLibaio(cfg Config) (Device, error) { return nil, errors.New("device: libaio not built yet") }
